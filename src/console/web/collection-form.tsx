import { useSignal } from '@preact/signals';
import { ApiError, api } from './api-client';
import type { Collection } from './api-types';
import { describedBy, Field } from './field';

/** Props of {@link CollectionForm}. */
export interface CollectionFormProps {
  existing?: Collection;
  onDone(): void;
}

/** Create a collection or edit its members: one tag path or pattern per line. */
export function CollectionForm({ existing, onDone }: CollectionFormProps) {
  const name = useSignal(existing?.name ?? '');
  const members = useSignal((existing?.members ?? []).join('\n'));
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');

  const errorAt = (field: string) =>
    Object.entries(errors.value).find(
      ([path]) => path === field || path.startsWith(`${field}[`),
    )?.[1];

  const submit = async (event: Event) => {
    event.preventDefault();
    errors.value = {};
    formError.value = '';
    const body = {
      name: name.value.trim(),
      members: members.value
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
    };
    try {
      if (existing) {
        await api(`/api/v2/Collections/${encodeURIComponent(existing.name)}`, {
          method: 'PUT',
          body,
        });
      } else {
        await api('/api/v2/Collections', { method: 'POST', body });
      }
      onDone();
    } catch (error) {
      if (error instanceof ApiError) {
        errors.value = error.fieldErrors();
        formError.value = error.message;
      } else {
        formError.value = 'The gateway could not be reached.';
      }
    }
  };

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="collection-form-title">
      <h1 id="collection-form-title">
        {existing ? `Edit collection ${existing.name}` : 'New collection'}
      </h1>
      <Field id="collection-name" label="Name" error={errorAt('name')}>
        <input
          id="collection-name"
          value={name.value}
          disabled={Boolean(existing)}
          aria-invalid={errorAt('name') ? true : undefined}
          aria-describedby={describedBy('collection-name', errorAt('name'))}
          onInput={(event) => {
            name.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <Field
        id="collection-members"
        label="Members"
        error={errorAt('members')}
        hint="One tag path or pattern per line: * is one segment, ** any depth (Demo/Line1/**)."
      >
        <textarea
          id="collection-members"
          rows={8}
          value={members.value}
          aria-invalid={errorAt('members') ? true : undefined}
          aria-describedby={describedBy('collection-members', errorAt('members'), 'hint')}
          onInput={(event) => {
            members.value = (event.target as HTMLTextAreaElement).value;
          }}
        />
      </Field>
      {formError.value ? (
        <p class="form-error" role="alert">
          {formError.value}
        </p>
      ) : null}
      <div class="buttons">
        <button type="submit" class="primary">
          {existing ? 'Save' : 'Create'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
