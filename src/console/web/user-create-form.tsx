import { useSignal } from '@preact/signals';
import { roleNames } from './accounts';
import { api, failureMessage } from './api-client';
import { describedBy, Field, FieldError } from './field';
import { FormError } from './form-error';
import { fieldErrorsOf } from './form-errors';
import { href } from './router';
import { TokenPanel } from './token-panel';

/** New account: a user with an initial password (changed at first sign-in) or a service account. */
export function UserCreateForm({ onDone }: { onDone(username: string): void }) {
  const username = useSignal('');
  const kind = useSignal<'user' | 'service'>('user');
  const roles = useSignal<string[]>(['Viewers']);
  const password = useSignal('');
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const oneTimePassword = useSignal('');

  const submit = async (event: Event) => {
    event.preventDefault();
    errors.value = {};
    formError.value = '';
    try {
      const created = await api<{ username: string; oneTimePassword?: string }>('/api/v2/Users', {
        method: 'POST',
        body: {
          username: username.value.trim(),
          service: kind.value === 'service',
          roles: roles.value,
          // Left empty, the server generates one and answers it once.
          ...(kind.value === 'user' && password.value ? { password: password.value } : {}),
        },
      });
      if (created.oneTimePassword) oneTimePassword.value = created.oneTimePassword;
      else onDone(created.username);
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = failureMessage(error);
    }
  };
  const errorAt = (field: string) =>
    Object.entries(errors.value).find(
      ([path]) => path === field || path.startsWith(`${field}[`),
    )?.[1];

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="user-create-title">
      <p>
        <a href={href('users')}>← All accounts</a>
      </p>
      <h1 id="user-create-title">New account</h1>
      <Field id="new-username" label="Account name" error={errorAt('username')}>
        <input
          id="new-username"
          value={username.value}
          autocomplete="off"
          aria-describedby={describedBy('new-username', errorAt('username'))}
          onInput={(event) => {
            username.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <fieldset>
        <legend>Kind</legend>
        <label class="check">
          <input
            type="radio"
            name="kind"
            checked={kind.value === 'user'}
            onChange={() => {
              kind.value = 'user';
            }}
          />{' '}
          User (signs in with a password)
        </label>
        <label class="check">
          <input
            type="radio"
            name="kind"
            checked={kind.value === 'service'}
            onChange={() => {
              kind.value = 'service';
            }}
          />{' '}
          Service account (a token for SCADA, MES or scripts)
        </label>
      </fieldset>
      <fieldset aria-describedby={describedBy('roles', errorAt('roles'))}>
        <legend>Roles</legend>
        {roleNames.map((role) => (
          <label key={role} class="check">
            <input
              type="checkbox"
              checked={roles.value.includes(role)}
              onChange={(event) => {
                roles.value = (event.target as HTMLInputElement).checked
                  ? [...roles.value, role]
                  : roles.value.filter((entry) => entry !== role);
              }}
            />{' '}
            {role}
          </label>
        ))}
        <FieldError id="roles" error={errorAt('roles')} />
      </fieldset>
      {kind.value === 'user' ? (
        <Field
          id="new-password"
          label="Initial password"
          error={errorAt('password')}
          hint="At least 10 characters; the user must change it at the first sign-in. Leave empty to have one generated."
        >
          <input
            id="new-password"
            type="password"
            autocomplete="new-password"
            value={password.value}
            aria-describedby={describedBy('new-password', errorAt('password'), 'hint')}
            onInput={(event) => {
              password.value = (event.target as HTMLInputElement).value;
            }}
          />
        </Field>
      ) : null}
      <FormError>{formError.value}</FormError>
      {oneTimePassword.value ? (
        <>
          <TokenPanel label="One-time password (shown once)" secret={oneTimePassword.value} />
          <p>
            <a href={href('users', username.value.trim())}>Open the account</a>
          </p>
        </>
      ) : null}
      <div class="buttons">
        <button type="submit" class="primary">
          Create account
        </button>
      </div>
    </form>
  );
}
