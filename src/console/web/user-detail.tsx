import { useSignal } from '@preact/signals';
import { roleNames, stateOf } from './accounts';
import { ApiError, api } from './api-client';
import type { UserView } from './api-types';
import { FormError } from './form-error';
import { Notice } from './notice';
import { accountPageId } from './pages';
import { href, navigate } from './router';
import { session } from './session';
import { TokenPanel } from './token-panel';
import { usePoll } from './use-poll';

/** Props of {@link UserDetail}. */
export interface UserDetailProps {
  name: string;
  /** After a change, so the list is fresh on the way back. */
  onChanged(): void;
}

/**
 * One account: Account tab (roles, enable/disable, password and two-factor resets) and, for
 * service accounts, the User Actions tab that generates the account's token.
 */
export function UserDetail({ name, onChanged }: UserDetailProps) {
  // Polled: the CLI (tagd users …) and other administrators change accounts too.
  const user = usePoll(
    () => api<UserView>(`/api/v2/Users/${encodeURIComponent(name)}`),
    5_000,
    name,
  );
  const tab = useSignal<'account' | 'actions'>('account');
  const roles = useSignal<string[] | undefined>(undefined);
  const message = useSignal('');
  const error = useSignal('');
  const oneTimePassword = useSignal('');
  const confirmingDelete = useSignal(false);

  const account = user.data;
  if (!account) {
    return <p role={user.error ? 'alert' : 'status'}>{user.error || 'Loading…'}</p>;
  }
  const chosenRoles = roles.value ?? account.roles;
  const isSelf = session.value?.username === account.username;

  const run = async (action: () => Promise<string>) => {
    message.value = '';
    error.value = '';
    try {
      message.value = await action();
      roles.value = undefined;
      user.reload();
      onChanged();
    } catch (failure) {
      error.value = failure instanceof ApiError ? failure.message : String(failure);
    }
  };
  const path = `/api/v2/Users/${encodeURIComponent(account.username)}`;
  const save = (changes: { roles?: string[]; enabled?: boolean }, done: string) =>
    run(async () => {
      await api(path, { method: 'PUT', body: changes });
      return done;
    });

  const tabs = [
    { id: 'account' as const, label: 'Account' },
    ...(account.service ? [{ id: 'actions' as const, label: 'User Actions' }] : []),
  ];
  const onTabKey = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const index = tabs.findIndex((entry) => entry.id === tab.value);
    const next = tabs[(index + (event.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
    if (next) {
      tab.value = next.id;
      document.getElementById(`tab-${next.id}`)?.focus();
    }
  };

  return (
    <section class="panel" aria-labelledby="user-title">
      <p>
        <a href={href('users')}>← All accounts</a>
      </p>
      <h1 id="user-title">
        {account.username} <span class="muted">{account.service ? 'service account' : 'user'}</span>
      </h1>
      <div role="tablist" aria-label="Account sections" class="tabs" onKeyDown={onTabKey}>
        {tabs.map((entry) => (
          <button
            key={entry.id}
            type="button"
            role="tab"
            id={`tab-${entry.id}`}
            aria-selected={tab.value === entry.id}
            aria-controls={`panel-${entry.id}`}
            tabIndex={tab.value === entry.id ? 0 : -1}
            onClick={() => {
              tab.value = entry.id;
            }}
          >
            {entry.label}
          </button>
        ))}
      </div>
      <Notice>{message.value}</Notice>
      <FormError>{error.value}</FormError>
      {tab.value === 'account' ? (
        <div role="tabpanel" id="panel-account" aria-labelledby="tab-account" class="tab-panel">
          <fieldset>
            <legend>Roles</legend>
            {roleNames.map((role) => (
              <label key={role} class="check">
                <input
                  type="checkbox"
                  checked={chosenRoles.includes(role)}
                  onChange={(event) => {
                    const checked = (event.target as HTMLInputElement).checked;
                    roles.value = checked
                      ? [...chosenRoles, role]
                      : chosenRoles.filter((entry) => entry !== role);
                  }}
                />{' '}
                {role}
              </label>
            ))}
            <button
              type="button"
              class="primary"
              disabled={roles.value === undefined}
              onClick={() => void save({ roles: chosenRoles }, 'Roles saved.')}
            >
              Save roles
            </button>
          </fieldset>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd>{stateOf(account)}</dd>
            </div>
            <div>
              <dt>Two-factor</dt>
              <dd>{account.twoFactor ? 'On' : 'Off'}</dd>
            </div>
            {account.createdAt ? (
              <div>
                <dt>Created</dt>
                <dd>{new Date(account.createdAt).toLocaleString()}</dd>
              </div>
            ) : null}
          </dl>
          {isSelf ? (
            <p class="hint" id="self-reason">
              This is your own account: another administrator disables or deletes it. Your password
              and two-factor are on <a href={href(accountPageId)}>My account</a>.
            </p>
          ) : null}
          <div class="buttons">
            <button
              type="button"
              disabled={isSelf}
              aria-describedby={isSelf ? 'self-reason' : undefined}
              onClick={() =>
                void save(
                  { enabled: !account.enabled },
                  !account.enabled
                    ? 'Account enabled.'
                    : 'Account disabled: its tokens stop working.',
                )
              }
            >
              {account.enabled ? 'Disable account' : 'Enable account'}
            </button>
            {!account.service ? (
              <button
                type="button"
                onClick={() =>
                  void run(async () => {
                    const answer = await api<{ oneTimePassword: string }>(`${path}/ResetPassword`, {
                      method: 'POST',
                    });
                    oneTimePassword.value = answer.oneTimePassword;
                    return 'Password reset: the account must choose a new one at its next sign-in.';
                  })
                }
              >
                Reset password
              </button>
            ) : null}
            {!account.service && account.twoFactor ? (
              <button
                type="button"
                onClick={() =>
                  void run(async () => {
                    await api(`${path}/TwoFactor`, { method: 'DELETE' });
                    return 'Two-factor reset: the account signs in with its password alone until it enrols again.';
                  })
                }
              >
                Reset two-factor
              </button>
            ) : null}
            {confirmingDelete.value ? (
              <>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    void run(async () => {
                      await api(path, { method: 'DELETE' });
                      navigate('users');
                      return 'Account deleted.';
                    })
                  }
                >
                  Confirm: delete {account.username}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    confirmingDelete.value = false;
                  }}
                >
                  Keep the account
                </button>
              </>
            ) : (
              <button
                type="button"
                disabled={isSelf}
                aria-describedby={isSelf ? 'self-reason' : undefined}
                onClick={() => {
                  confirmingDelete.value = true;
                }}
              >
                Delete account
              </button>
            )}
          </div>
          {oneTimePassword.value ? (
            <TokenPanel label="One-time password (shown once)" secret={oneTimePassword.value} />
          ) : null}
        </div>
      ) : (
        <div role="tabpanel" id="panel-actions" aria-labelledby="tab-actions" class="tab-panel">
          <TokenPanel account={account.username} />
        </div>
      )}
    </section>
  );
}
