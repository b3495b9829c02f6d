import { useSignal } from '@preact/signals';
import { ApiError, api, replacingSession } from './api-client';
import type { SignInResponse } from './api-types';
import { loadCurrentUser } from './current-user';
import { FormError } from './form-error';
import { Notice } from './notice';
import { boundTo, TextField } from './text-field';

/**
 * My account: a voluntary password change. The server ends every other sign-in of the account
 * and answers this browser with new cookies, so the console stays signed in.
 */
export function PasswordChangeForm() {
  const current = useSignal('');
  const next = useSignal('');
  const repeat = useSignal('');
  const errors = useSignal<Record<string, string>>({});
  const message = useSignal('');
  const done = useSignal('');
  const busy = useSignal(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    errors.value = {};
    message.value = '';
    done.value = '';
    if (next.value !== repeat.value) {
      errors.value = { repeatPassword: 'The two new passwords differ.' };
      return;
    }
    busy.value = true;
    try {
      // A call that renews an expired access cookie first (or ends the session when it cannot):
      // then a 401 from the change below can only mean a wrong current password.
      await loadCurrentUser();
      await replacingSession(() =>
        api<SignInResponse>('/api/v2/Users/Current/ChangePassword?useCookies=true', {
          method: 'POST',
          body: { currentPassword: current.value, newPassword: next.value },
          noRenew: true,
        }),
      );
      current.value = '';
      next.value = '';
      repeat.value = '';
      done.value = 'Password changed. Your other sessions have ended.';
    } catch (failure) {
      if (failure instanceof ApiError) {
        const fields = failure.fieldErrors();
        if (failure.status === 401) fields.currentPassword = failure.message;
        errors.value = fields;
        if (Object.keys(fields).length === 0) message.value = failure.message;
      } else {
        message.value = 'The gateway could not be reached.';
      }
    } finally {
      busy.value = false;
    }
  };

  const fieldErrors = errors.value;
  return (
    <form class="form account-section" onSubmit={(event) => void submit(event)} noValidate>
      <h2>Password</h2>
      <TextField
        id="currentPassword"
        label="Current password"
        error={fieldErrors.currentPassword}
        type="password"
        required
        autocomplete="current-password"
        {...boundTo(current)}
      />
      <TextField
        id="newPassword"
        label="New password"
        error={fieldErrors.newPassword}
        hint="At least 10 characters."
        type="password"
        required
        autocomplete="new-password"
        {...boundTo(next)}
      />
      <TextField
        id="repeatPassword"
        label="Repeat the new password"
        error={fieldErrors.repeatPassword}
        type="password"
        required
        autocomplete="new-password"
        {...boundTo(repeat)}
      />
      <FormError>{message.value}</FormError>
      <Notice>{done.value}</Notice>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy.value}>
          {busy.value ? 'Changing…' : 'Change password'}
        </button>
      </div>
    </form>
  );
}
