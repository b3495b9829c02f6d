import { useSignal } from '@preact/signals';
import { ApiError, api, replacingSession } from './api-client';
import type { CurrentUser, PendingTwoFactor, SignInResponse } from './api-types';
import { loadCurrentUser } from './current-user';
import { FormError } from './form-error';
import { Notice } from './notice';
import { boundTo, TextField } from './text-field';

const path = '/api/v2/Users/Current/TwoFactor';

/**
 * My account: enrol two-factor (password → QR code and the secret as text → a code from the
 * app → enrolled) or remove it (password and a code). Enrolling or removing ends the account's
 * other sessions; this browser gets new cookies and stays signed in.
 */
export function TwoFactorPanel({ account }: { account: CurrentUser }) {
  const password = useSignal('');
  const code = useSignal('');
  const pending = useSignal<PendingTwoFactor | undefined>(undefined);
  const errors = useSignal<Record<string, string>>({});
  const message = useSignal('');
  const done = useSignal('');
  const busy = useSignal(false);

  const run = async (action: () => Promise<void>) => {
    busy.value = true;
    errors.value = {};
    message.value = '';
    done.value = '';
    try {
      await action();
    } catch (failure) {
      if (failure instanceof ApiError) {
        errors.value = failure.fieldErrors();
        if (Object.keys(errors.value).length === 0) message.value = failure.message;
        // The pending secret expired or was voided: back to the start.
        if (failure.problem.code === 'two-factor-state') pending.value = undefined;
      } else {
        message.value = 'The gateway could not be reached.';
      }
    } finally {
      busy.value = false;
    }
  };

  const start = () =>
    run(async () => {
      pending.value = await api<PendingTwoFactor>(path, {
        method: 'POST',
        body: { password: password.value },
      });
      password.value = '';
      code.value = '';
    });
  const confirm = () =>
    run(async () => {
      await replacingSession(() =>
        api<SignInResponse>(`${path}/Confirm?useCookies=true`, {
          method: 'POST',
          body: { code: code.value.trim() },
        }),
      );
      pending.value = undefined;
      code.value = '';
      done.value = 'Two-factor is on. Your other sessions have ended.';
      await loadCurrentUser();
    });
  const remove = () =>
    run(async () => {
      await replacingSession(() =>
        api<SignInResponse>(`${path}/Remove?useCookies=true`, {
          method: 'POST',
          body: { password: password.value, code: code.value.trim() },
        }),
      );
      password.value = '';
      code.value = '';
      done.value = 'Two-factor is off. Your other sessions have ended.';
      await loadCurrentUser();
    });

  const fieldErrors = errors.value;
  const passwordField = (
    <TextField
      id="twoFactorPassword"
      label="Password"
      error={fieldErrors.password}
      required
      type="password"
      autocomplete="current-password"
      {...boundTo(password)}
    />
  );
  const codeField = (
    <TextField
      id="twoFactorCode"
      label="Code from the authenticator app"
      error={fieldErrors.code}
      required
      inputMode="numeric"
      autocomplete="one-time-code"
      pattern="[0-9]{6}"
      maxLength={6}
      {...boundTo(code)}
    />
  );
  const feedback = (
    <>
      <FormError>{message.value}</FormError>
      <Notice>{done.value}</Notice>
    </>
  );
  const submitting = (event: Event, action: () => Promise<void>) => {
    event.preventDefault();
    void action();
  };

  if (account.kind === 'service') {
    return (
      <section class="form account-section" aria-labelledby="two-factor-title">
        <h2 id="two-factor-title">Two-factor</h2>
        <p>A service account signs in with a generated token: it has no two-factor.</p>
      </section>
    );
  }
  const offered = pending.value;
  return (
    <section class="form account-section" aria-labelledby="two-factor-title">
      <h2 id="two-factor-title">Two-factor</h2>
      {account.twoFactor ? (
        <form onSubmit={(event) => submitting(event, remove)} noValidate>
          <p>
            Two-factor is <strong>on</strong>: signing in asks for a code from your authenticator
            app. Removing it takes your password and a current code; if the phone is lost, an
            administrator can remove it on Users &amp; Groups.
          </p>
          {passwordField}
          {codeField}
          {feedback}
          <div class="buttons">
            <button type="submit" class="danger" disabled={busy.value}>
              {busy.value ? 'Removing…' : 'Remove two-factor'}
            </button>
          </div>
        </form>
      ) : offered ? (
        <form onSubmit={(event) => submitting(event, confirm)} noValidate>
          <p>
            Scan this code with an authenticator app, or enter the secret by hand, then type the
            code the app shows. Nothing changes until the code is confirmed (before{' '}
            {new Date(offered.expiresAt).toLocaleTimeString()}).
          </p>
          <img
            class="qr-code"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(offered.qrCodeSvg)}`}
            alt="QR code of the two-factor secret (the same as the setup link below)"
          />
          <dl class="facts">
            <div>
              <dt>Secret</dt>
              <dd class="mono secret-text">
                {new URL(offered.uri).searchParams.get('secret') ?? ''}
              </dd>
            </div>
            <div>
              <dt>Setup link</dt>
              <dd class="mono secret-text" data-testid="otpauth-uri">
                {offered.uri}
              </dd>
            </div>
          </dl>
          {codeField}
          {feedback}
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy.value}>
              {busy.value ? 'Confirming…' : 'Confirm code'}
            </button>
            <button
              type="button"
              disabled={busy.value}
              onClick={() => {
                pending.value = undefined;
                errors.value = {};
                message.value = '';
              }}
            >
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <form onSubmit={(event) => submitting(event, start)} noValidate>
          <p>
            Two-factor is <strong>off</strong>. With it on, signing in also asks for a code from an
            authenticator app on your phone. Enrolling ends your other sessions.
          </p>
          {passwordField}
          {feedback}
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy.value}>
              {busy.value ? 'Starting…' : 'Set up two-factor'}
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
