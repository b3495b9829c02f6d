import type { Signal } from '@preact/signals';
import { optionsOf, SelectField } from './select-field';
import { TextField } from './text-field';

/** One credential input of an authentication mode. */
export interface CredentialField<K extends string> {
  /** The key under `authentication` in the API's object; the input's id is `authentication.<key>`. */
  key: K;
  label: string;
  /** Typed as a password (masked as the API returns it). */
  secret: boolean;
}

/** Props of {@link AuthenticationFields}. */
export interface AuthenticationFieldsProps<M extends string, K extends string> {
  /** The modes offered, in order. */
  modes: readonly M[];
  /** The credential inputs each mode shows. */
  credentialFields: Record<M, readonly CredentialField<K>[]>;
  mode: Signal<M>;
  /** The credentials typed (or as the API returned them, secrets masked). */
  credentials: Signal<Partial<Record<K, unknown>>>;
  /** The API's message for a field path (`authentication.mode`, `authentication.<key>`). */
  errorAt(field: string): string | undefined;
}

/** A publisher's "Authentication" choice and the credential inputs of the chosen mode. */
export function AuthenticationFields<M extends string, K extends string>({
  modes,
  credentialFields,
  mode,
  credentials,
  errorAt,
}: AuthenticationFieldsProps<M, K>) {
  return (
    <>
      <SelectField
        id="authentication.mode"
        label="Authentication"
        error={errorAt('authentication.mode')}
        value={mode.value}
        onValue={(chosen) => {
          mode.value = chosen as M;
        }}
      >
        {optionsOf(modes)}
      </SelectField>
      {credentialFields[mode.value].map((field) => {
        const id = `authentication.${field.key}`;
        return (
          <TextField
            key={id}
            id={id}
            label={field.label}
            error={errorAt(id)}
            type={field.secret ? 'password' : 'text'}
            autocomplete="off"
            value={String(credentials.value[field.key] ?? '')}
            onValue={(text) => {
              credentials.value = { ...credentials.value, [field.key]: text };
            }}
          />
        );
      })}
    </>
  );
}
