import { useSignal } from '@preact/signals';
import { failureMessage, saveItem } from './api-client';
import type { Collection } from './api-types';
import { CollectionPreview } from './collection-preview';
import { describedBy, Field } from './field';
import { FormEnd } from './form-end';
import { fieldErrorsOf } from './form-errors';
import { boundTo, TextField } from './text-field';

/** The members as typed, each with its line number (1-based); empty lines are left out. */
function memberLines(text: string): { line: number; member: string }[] {
  return text
    .split('\n')
    .map((member, index) => ({ line: index + 1, member: member.trim() }))
    .filter((entry) => entry.member !== '');
}

/**
 * The API's messages about `members[i]`, each at the line the member was typed on, e.g.
 * `Line 3 ('Demo//x'): Invalid pattern…`; undefined when no member is wrong.
 */
export function memberLineErrors(
  errors: Record<string, string>,
  lines: readonly { line: number; member: string }[],
): string | undefined {
  const messages: string[] = [];
  for (const [path, message] of Object.entries(errors)) {
    if (path === 'members') messages.push(message);
    const index = /^members\[(\d+)\]/.exec(path)?.[1];
    if (index === undefined) continue;
    const entry = lines[Number(index)];
    messages.push(
      entry === undefined ? message : `Line ${entry.line} ('${entry.member}'): ${message}`,
    );
  }
  return messages.length > 0 ? messages.join(' ') : undefined;
}

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

  // The lines as they were sent: the messages name the member the API refused, even if the
  // text was edited since.
  const sentLines = useSignal<{ line: number; member: string }[]>([]);
  const membersError = memberLineErrors(errors.value, sentLines.value);
  const errorAt = (field: string) =>
    Object.entries(errors.value).find(
      ([path]) => path === field || path.startsWith(`${field}[`),
    )?.[1];

  const submit = async (event: Event) => {
    event.preventDefault();
    errors.value = {};
    formError.value = '';
    sentLines.value = memberLines(members.value);
    const body = {
      name: name.value.trim(),
      members: sentLines.value.map((entry) => entry.member),
    };
    try {
      await saveItem('/api/v2/Collections', existing?.name, body);
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = failureMessage(error);
    }
  };

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="collection-form-title">
      <h1 id="collection-form-title">
        {existing ? `Edit collection ${existing.name}` : 'New collection'}
      </h1>
      <TextField
        id="collection-name"
        label="Name"
        error={errorAt('name')}
        disabled={Boolean(existing)}
        {...boundTo(name)}
      />
      <Field
        id="collection-members"
        label="Members"
        error={membersError}
        hint="One tag path or pattern per line: * is one segment, ** any depth (Demo/Line1/**)."
      >
        <textarea
          id="collection-members"
          rows={8}
          value={members.value}
          aria-invalid={membersError ? true : undefined}
          aria-describedby={describedBy('collection-members', membersError, 'hint')}
          onInput={(event) => {
            members.value = (event.target as HTMLTextAreaElement).value;
          }}
        />
      </Field>
      <CollectionPreview lines={() => memberLines(members.value).map((entry) => entry.member)} />
      <FormEnd error={formError.value} submit={existing ? 'Save' : 'Create'} onCancel={onDone} />
    </form>
  );
}
