import { currentUser } from './current-user';
import { PasswordChangeForm } from './password-change-form';
import { ThemePicker } from './theme-picker';
import { TwoFactorPanel } from './two-factor-panel';

/**
 * My account (`#/account`, every signed-in account, linked from its name in the top bar): who
 * this is, the password, two-factor and the console theme.
 */
export function AccountPage() {
  const account = currentUser.value;
  return (
    <section class="panel" aria-labelledby="account-title">
      <h1 id="account-title">My account</h1>
      {!account ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <dl class="facts">
            <div>
              <dt>Account</dt>
              <dd>{account.username}</dd>
            </div>
            <div>
              <dt>Kind</dt>
              <dd>{account.kind === 'service' ? 'Service account' : 'User'}</dd>
            </div>
            <div>
              <dt>Roles</dt>
              <dd>{account.roles.join(', ') || 'None'}</dd>
            </div>
            <div>
              <dt>Two-factor</dt>
              <dd>{account.twoFactor ? 'On' : 'Off'}</dd>
            </div>
            <div>
              <dt>Gateway</dt>
              <dd>
                {account.hostName}, tagd {account.version}
              </dd>
            </div>
          </dl>
          {account.kind === 'user' ? <PasswordChangeForm /> : null}
          <TwoFactorPanel account={account} />
          <section class="form account-section" aria-labelledby="theme-title">
            <h2 id="theme-title">Console theme</h2>
            <p class="hint">Kept with the account: it follows you to any browser.</p>
            <ThemePicker />
          </section>
        </>
      )}
    </section>
  );
}
