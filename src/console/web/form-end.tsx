import type { ComponentChildren } from 'preact';
import { FormError } from './form-error';

/** Props of {@link FormEnd}. */
export interface FormEndProps {
  /** The form's message ('' for none). */
  error: string;
  /** A save is under way: the submit button waits. Default false. */
  busy?: boolean;
  /** The submit button's text (`Save`, `Create`, `Add driver`). */
  submit: string;
  onCancel(): void;
  /** More buttons, after Cancel. */
  children?: ComponentChildren;
}

/** The end of an edit form: its message, then the primary submit button and Cancel. */
export function FormEnd({ error, busy = false, submit, onCancel, children }: FormEndProps) {
  return (
    <>
      <FormError>{error}</FormError>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          {submit}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        {children}
      </div>
    </>
  );
}
