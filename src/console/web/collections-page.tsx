import { useSignal } from '@preact/signals';
import { ApiError, api } from './api-client';
import type { Collection } from './api-types';
import { CollectionForm } from './collection-form';
import { FormError } from './form-error';
import { Notice } from './notice';
import { href, navigate, route } from './router';
import { Table } from './table';
import { usePoll } from './use-poll';

/**
 * Collections: named sets of tag paths and patterns that publishers send. List, create, edit the
 * members (`#/collections/edit/<name>`), delete (asked twice).
 */
export function CollectionsPage() {
  const [, action, name] = route.value.segments;
  if (action === 'new') return <CollectionForm onDone={() => navigate('collections')} />;
  if (action === 'edit' && name) return <EditCollection key={name} name={name} />;
  return <CollectionList />;
}

/**
 * The form on the collection read afresh: the list may predate a save made a moment ago, and a
 * form opened on it would send the old members back. Read once: nothing replaces what the user
 * types.
 */
function EditCollection({ name }: { name: string }) {
  const entry = usePoll(
    () => api<Collection>(`/api/v2/Collections/${encodeURIComponent(name)}`),
    0,
    name,
  );
  if (entry.error) {
    return <FormError>{entry.error}</FormError>;
  }
  if (!entry.data) return <p role="status">Loading…</p>;
  return <CollectionForm existing={entry.data} onDone={() => navigate('collections')} />;
}

function CollectionList() {
  const list = usePoll(() => api<Collection[]>('/api/v2/Collections'), 0);
  const confirming = useSignal<string | undefined>(undefined);
  const message = useSignal('');

  const remove = async (collection: string) => {
    confirming.value = undefined;
    try {
      await api(`/api/v2/Collections/${encodeURIComponent(collection)}`, { method: 'DELETE' });
      message.value = `Collection ${collection} deleted.`;
    } catch (error) {
      message.value = error instanceof ApiError ? error.message : String(error);
    }
    list.reload();
  };

  return (
    <section class="panel" aria-labelledby="collections-title">
      <div class="panel-head">
        <h1 id="collections-title">Collections</h1>
        <a class="button primary" href={href('collections', 'new')}>
          New collection
        </a>
      </div>
      <FormError>{list.error}</FormError>
      <Notice>{message.value}</Notice>
      {!list.data ? (
        <p role="status">Loading…</p>
      ) : list.data.length === 0 ? (
        <p>No collections yet.</p>
      ) : (
        <Table caption="Collections" columns={['Name', 'Members', 'Actions']}>
          {list.data.map((collection) => (
            <tr key={collection.name}>
              <th scope="row">{collection.name}</th>
              <td>
                {collection.members.map((member) => (
                  <code key={member} class="chip">
                    {member}
                  </code>
                ))}
              </td>
              <td>
                <div class="actions">
                  <a class="button" href={href('collections', 'edit', collection.name)}>
                    Edit<span class="visually-hidden"> {collection.name}</span>
                  </a>
                  {confirming.value === collection.name ? (
                    <>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => void remove(collection.name)}
                      >
                        Confirm delete<span class="visually-hidden"> {collection.name}</span>
                      </button>
                      <button
                        type="button"
                        onClick={() => {
                          confirming.value = undefined;
                        }}
                      >
                        Keep
                      </button>
                    </>
                  ) : (
                    <button
                      type="button"
                      onClick={() => {
                        confirming.value = collection.name;
                      }}
                    >
                      Delete<span class="visually-hidden"> {collection.name}</span>
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
