import { FieldError } from './field';

/** Props of {@link CheckField}. */
export interface CheckFieldProps {
  /** Unique id of the checkbox; its error text gets `<id>-error`. */
  id: string;
  /** The text beside the box, also its accessible name. */
  label: string;
  checked: boolean;
  onChange(checked: boolean): void;
  /** The API's message for this field; it marks the field invalid and shows under it. */
  error?: string | undefined;
}

/** A labelled checkbox field with its validation message. */
export function CheckField({ id, label, checked, onChange, error }: CheckFieldProps) {
  return (
    <div class={`field check-field${error ? ' invalid' : ''}`}>
      <label class="check">
        <input
          id={id}
          type="checkbox"
          checked={checked}
          onChange={(event) => onChange((event.target as HTMLInputElement).checked)}
        />{' '}
        {label}
      </label>
      <FieldError id={id} error={error} />
    </div>
  );
}
