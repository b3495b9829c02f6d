import type { ComponentChildren } from 'preact';

/** Props of {@link Field}. */
export interface FieldProps {
  /** Visible label, also the control's accessible name. */
  label: string;
  /** The API's message for this field, shown under it and tied to it with aria-describedby. */
  error?: string | undefined;
  /** Unique id of the control. */
  id: string;
  hint?: string;
  /** The control; it must carry `id` and `aria-describedby={describedBy(id, …)}`. */
  children: ComponentChildren;
}

/** The id of a field's error or hint text, for the control's aria-describedby. */
export function describedBy(id: string, error?: string, hint?: string): string | undefined {
  const ids = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean);
  return ids.length > 0 ? ids.join(' ') : undefined;
}

/**
 * The id and ARIA attributes of a field's control: `aria-invalid` while the field has an error,
 * `aria-describedby` naming its error and hint texts (see {@link describedBy}).
 */
export function controlAttributes(id: string, error?: string, hint?: string) {
  return {
    id,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy(id, error, hint),
  } as const;
}

/**
 * A field's validation message, announced at once and named `<id>-error` for the control's
 * aria-describedby; nothing when the field has no error.
 */
export function FieldError({ id, error }: { id: string; error: string | undefined }) {
  return error ? (
    <p id={`${id}-error`} class="field-error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A labelled form control with its hint and its validation message. */
export function Field({ label, error, id, hint, children }: FieldProps) {
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children}
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
      <FieldError id={id} error={error} />
    </div>
  );
}
