import type { ComponentChildren } from 'preact';
import { controlAttributes, Field } from './field';

/** Props of {@link SelectField}. */
export interface SelectFieldProps {
  /** Unique id of the select. */
  id: string;
  /** Visible label, also the select's accessible name. */
  label: string;
  /** The API's message for this field, shown under it. */
  error?: string | undefined;
  value: string;
  /** Called with the value chosen. */
  onValue(value: string): void;
  /** The `<option>`s. */
  children: ComponentChildren;
}

/** A labelled select with its validation message. */
export function SelectField({ id, label, error, value, onValue, children }: SelectFieldProps) {
  return (
    <Field id={id} label={label} error={error}>
      <select
        {...controlAttributes(id, error)}
        value={value}
        onChange={(event) => onValue((event.target as HTMLSelectElement).value)}
      >
        {children}
      </select>
    </Field>
  );
}

/** One `<option>` a choice, its value its text. */
export function optionsOf(choices: readonly string[]) {
  return choices.map((choice) => (
    <option key={choice} value={choice}>
      {choice}
    </option>
  ));
}
