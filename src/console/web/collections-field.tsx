import { type Signal, useSignal } from '@preact/signals';
import { api } from './api-client';
import type { Collection } from './api-types';
import { describedBy, Field, FieldError } from './field';
import { can } from './session';
import { usePoll } from './use-poll';

/** The collections a publisher form picks from, and its choice. */
export interface CollectionsChoice {
  /** Checked names (when the account may list collections). */
  selected: Signal<string[]>;
  /** Comma-separated names typed in (when it may not). */
  text: Signal<string>;
  /** The existing collections; undefined when they cannot be listed. */
  known: Collection[] | undefined;
  /** The names to send. */
  chosen(): string[];
}

/** State of a {@link CollectionsField}, starting from a publisher's collections. */
export function useCollectionsChoice(initial: string[]): CollectionsChoice {
  const selected = useSignal<string[]>(initial);
  const text = useSignal(initial.join(', '));
  const known = usePoll(
    () =>
      can('CollectionManage') ? api<Collection[]>('/api/v2/Collections') : Promise.resolve([]),
    0,
  );
  const list = can('CollectionManage') ? known.data : undefined;
  return {
    selected,
    text,
    known: list,
    chosen: () =>
      list
        ? selected.value
        : text.value
            .split(',')
            .map((entry) => entry.trim())
            .filter(Boolean),
  };
}

/**
 * A publisher's collections: checkboxes of the existing ones for an account that may list them,
 * else a comma-separated text field.
 */
export function CollectionsField({
  choice,
  error,
}: {
  choice: CollectionsChoice;
  error: string | undefined;
}) {
  const { selected, text, known } = choice;
  if (!known) {
    return (
      <Field id="collections" label="Collections" error={error} hint="Names, separated by commas.">
        <input
          id="collections"
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy('collections', error, 'hint')}
          value={text.value}
          onInput={(event) => {
            text.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
    );
  }
  const names = [...new Set([...known.map((collection) => collection.name), ...selected.value])];
  return (
    <fieldset
      class={`field${error ? ' invalid' : ''}`}
      aria-describedby={describedBy('collections', error)}
    >
      <legend>Collections</legend>
      {names.length === 0 ? (
        <p class="muted">No collections yet: create one on the Collections page.</p>
      ) : (
        names.map((collection) => (
          <label key={collection} class="check">
            <input
              type="checkbox"
              checked={selected.value.includes(collection)}
              onChange={(event) => {
                const checked = (event.target as HTMLInputElement).checked;
                selected.value = checked
                  ? [...selected.value, collection]
                  : selected.value.filter((entry) => entry !== collection);
              }}
            />{' '}
            {collection}
          </label>
        ))
      )}
      <FieldError id="collections" error={error} />
    </fieldset>
  );
}
