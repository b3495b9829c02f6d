import { useSignal } from '@preact/signals';
import { api } from './api-client';
import { FormEnd } from './form-end';
import { SendTest } from './publisher-test';

/** Props of {@link PublisherFormActions}. */
export interface PublisherFormActionsProps {
  /** The collection route of the publisher kind, e.g. `/api/v2/Publishers/Webhooks`. */
  resource: string;
  /** The name of the publisher edited; absent while one is created. */
  existing?: string | undefined;
  /** The form's message ('' for none). */
  formError: string;
  /** A save is under way: the submit button waits. */
  busy: boolean;
  /** Called once the publisher is deleted, and by Cancel. */
  onDone(): void;
  /** Called with what the DELETE threw, for the form to show. */
  onDeleteError(error: unknown): void;
}

/**
 * The end of a publisher form: "Send test" (when editing), the form's message, and Save/Create,
 * Cancel and a two-step "Delete publisher".
 */
export function PublisherFormActions({
  resource,
  existing,
  formError,
  busy,
  onDone,
  onDeleteError,
}: PublisherFormActionsProps) {
  const confirmingDelete = useSignal(false);
  const remove = async (publisher: string) => {
    try {
      await api(`${resource}/${encodeURIComponent(publisher)}`, { method: 'DELETE' });
      onDone();
    } catch (error) {
      onDeleteError(error);
    }
  };
  return (
    <>
      {existing !== undefined ? (
        <SendTest path={`${resource}/${encodeURIComponent(existing)}/Test`} name={existing} />
      ) : null}
      <FormEnd
        error={formError}
        busy={busy}
        submit={existing !== undefined ? 'Save' : 'Create'}
        onCancel={onDone}
      >
        {existing !== undefined ? (
          confirmingDelete.value ? (
            <button type="button" class="danger" onClick={() => void remove(existing)}>
              Confirm: delete {existing}
            </button>
          ) : (
            <button
              type="button"
              onClick={() => {
                confirmingDelete.value = true;
              }}
            >
              Delete publisher
            </button>
          )
        ) : null}
      </FormEnd>
    </>
  );
}
