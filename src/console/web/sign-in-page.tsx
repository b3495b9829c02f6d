import { useSignal } from '@preact/signals';
import { ApiError, api } from './api-client';
import type { SignInResponse } from './api-types';
import { FormError } from './form-error';
import { Notice } from './notice';
import { establish, signInNotice } from './session';
import { boundTo, TextField } from './text-field';

type Step =
  | { kind: 'password' }
  | { kind: 'change'; preAuthToken: string; currentPassword: string }
  | { kind: 'two-factor'; preAuthToken: string };

/**
 * Sign-in with a cookie session: password, then the steps the server asks for (the forced
 * password change of a new account, a two-factor code) until the session is established.
 */
export function SignInPage() {
  const step = useSignal<Step>({ kind: 'password' });
  const username = useSignal('');
  const password = useSignal('');
  const newPassword = useSignal('');
  const repeat = useSignal('');
  const code = useSignal('');
  const error = useSignal('');
  const fieldErrors = useSignal<Record<string, string>>({});
  const busy = useSignal(false);

  // Each answer either completes the sign-in or names the next step.
  const follow = (answer: SignInResponse, currentPassword: string) => {
    password.value = '';
    if (answer.preAuthToken && answer.requiresPasswordChange) {
      step.value = { kind: 'change', preAuthToken: answer.preAuthToken, currentPassword };
    } else if (answer.preAuthToken && answer.requiresTwoFactor) {
      code.value = '';
      step.value = { kind: 'two-factor', preAuthToken: answer.preAuthToken };
    } else {
      establish(answer);
    }
  };

  const run = async (action: () => Promise<void>) => {
    busy.value = true;
    error.value = '';
    fieldErrors.value = {};
    try {
      await action();
    } catch (failure) {
      if (failure instanceof ApiError) {
        fieldErrors.value = failure.fieldErrors();
        error.value =
          failure.status === 401 && step.value.kind !== 'password'
            ? `${failure.message} Start again with your password.`
            : failure.message;
        if (failure.status === 401 && step.value.kind !== 'password') {
          step.value = { kind: 'password' };
        }
      } else {
        error.value = 'The gateway could not be reached.';
      }
    } finally {
      busy.value = false;
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    // Every attempt starts clean: a message from an earlier answer must not stand beside a
    // later, different one (the two new passwords differ, after "not acceptable").
    error.value = '';
    fieldErrors.value = {};
    const current = step.value;
    if (current.kind === 'password') {
      void run(async () => {
        const typed = password.value;
        const answer = await api<SignInResponse>('/api/v2/Users/Authenticate?useCookies=true', {
          method: 'POST',
          body: { username: username.value, password: typed },
          noRenew: true,
        });
        follow(answer, typed);
      });
    } else if (current.kind === 'change') {
      if (newPassword.value !== repeat.value) {
        fieldErrors.value = { repeat: 'The two new passwords differ.' };
        return;
      }
      void run(async () => {
        const answer = await api<SignInResponse>(
          '/api/v2/Users/Current/ChangePassword?useCookies=true',
          {
            method: 'POST',
            bearer: current.preAuthToken,
            body: { currentPassword: current.currentPassword, newPassword: newPassword.value },
          },
        );
        newPassword.value = '';
        repeat.value = '';
        follow(answer, '');
      });
    } else {
      void run(async () => {
        const answer = await api<SignInResponse>(
          '/api/v2/Users/Authenticate/TwoFactor?useCookies=true',
          {
            method: 'POST',
            body: { preAuthToken: current.preAuthToken, code: code.value.trim() },
            noRenew: true,
          },
        );
        follow(answer, '');
      });
    }
  };

  const current = step.value;
  const errors = fieldErrors.value;
  return (
    <main class="sign-in" id="main">
      <form class="panel sign-in-form" onSubmit={submit} noValidate>
        <h1>tagd console</h1>
        {current.kind === 'password' ? (
          <>
            <Notice>{signInNotice.value}</Notice>
            <TextField
              id="username"
              label="Username"
              error={errors.username}
              autocomplete="username"
              required
              {...boundTo(username)}
            />
            <TextField
              id="password"
              label="Password"
              error={errors.password}
              type="password"
              autocomplete="current-password"
              required
              {...boundTo(password)}
            />
          </>
        ) : current.kind === 'change' ? (
          <>
            <Notice>This account must choose a new password before it can go on.</Notice>
            <TextField
              id="newPassword"
              label="New password"
              error={errors.newPassword}
              hint="At least 10 characters."
              type="password"
              autocomplete="new-password"
              required
              {...boundTo(newPassword)}
            />
            <TextField
              id="repeat"
              label="Repeat the new password"
              error={errors.repeat}
              type="password"
              autocomplete="new-password"
              required
              {...boundTo(repeat)}
            />
          </>
        ) : (
          <>
            <Notice>Enter the 6-digit code from your authenticator app.</Notice>
            <TextField
              id="code"
              label="Two-factor code"
              error={errors.code}
              inputMode="numeric"
              autocomplete="one-time-code"
              pattern="[0-9]{6}"
              maxLength={6}
              required
              {...boundTo(code)}
            />
          </>
        )}
        <FormError>{error.value}</FormError>
        <button type="submit" class="primary" disabled={busy.value}>
          {current.kind === 'password'
            ? 'Sign in'
            : current.kind === 'change'
              ? 'Change password'
              : 'Verify code'}
        </button>
      </form>
    </main>
  );
}
