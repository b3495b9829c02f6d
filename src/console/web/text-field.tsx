import type { InputHTMLAttributes } from 'preact';
import { controlAttributes, Field } from './field';

/** Props of {@link TextField}: those of {@link Field}, the text, and any other input attribute. */
export interface TextFieldProps
  extends Omit<InputHTMLAttributes<HTMLInputElement>, 'id' | 'label' | 'value' | 'onInput'> {
  /** Unique id of the input. */
  id: string;
  /** Visible label, also the input's accessible name. */
  label: string;
  /** The API's message for this field, shown under it. */
  error?: string | undefined;
  hint?: string | undefined;
  value: string;
  /** Called with the text on every keystroke. */
  onValue(value: string): void;
}

/** A labelled text input (any `type`) with its hint and validation message. */
export function TextField({ id, label, error, hint, value, onValue, ...input }: TextFieldProps) {
  return (
    <Field id={id} label={label} error={error} hint={hint}>
      <input
        {...controlAttributes(id, error, hint)}
        value={value}
        onInput={(event) => onValue((event.target as HTMLInputElement).value)}
        {...input}
      />
    </Field>
  );
}

/**
 * The `value` and `onValue` of a {@link TextField} bound to a signal (or anything with a
 * writable `value`): `<TextField … {...boundTo(name)} />`.
 */
export function boundTo(signal: { value: string }): Pick<TextFieldProps, 'value' | 'onValue'> {
  return {
    value: signal.value,
    onValue: (typed) => {
      signal.value = typed;
    },
  };
}
