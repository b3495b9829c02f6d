import { useSignal } from '@preact/signals';
import { stateOf } from './accounts';
import { api } from './api-client';
import type { UserView } from './api-types';
import { FormError } from './form-error';
import { href, navigate, route } from './router';
import { Table } from './table';
import { usePoll } from './use-poll';
import { UserCreateForm } from './user-create-form';
import { UserDetail } from './user-detail';

/**
 * Users & Groups (Administrators, `UserManage`): the accounts with their roles and state; an
 * account's page (`#/users/<name>`) changes roles, enables or disables, resets the password or
 * two-factor, and for service accounts generates the token under User Actions.
 */
export function UsersPage() {
  const [, name] = route.value.segments;
  const list = usePoll(
    () => api<{ users: UserView[] }>('/api/v2/Users').then((answer) => answer.users),
    // The list is polled while shown: the CLI and other administrators change accounts too.
    name ? 0 : 5_000,
    name ?? '',
  );
  const filter = useSignal('');

  if (name === 'new') {
    return <UserCreateForm onDone={(created) => navigate('users', created)} />;
  }
  if (name) {
    // Keyed: another account's page starts afresh (tab, pending roles, shown secrets).
    return <UserDetail key={name} name={name} onChanged={list.reload} />;
  }

  const needle = filter.value.trim().toLowerCase();
  const users = (list.data ?? []).filter((user) => user.username.toLowerCase().includes(needle));
  return (
    <section class="panel" aria-labelledby="users-title">
      <div class="panel-head">
        <h1 id="users-title">Users &amp; Groups</h1>
        <a class="button primary" href={href('users', 'new')}>
          New account
        </a>
      </div>
      <label class="field">
        <span>Filter accounts</span>
        <input
          type="search"
          value={filter.value}
          onInput={(event) => {
            filter.value = (event.target as HTMLInputElement).value;
          }}
        />
      </label>
      <FormError>{list.error}</FormError>
      {!list.data ? (
        <p role="status">Loading…</p>
      ) : (
        <Table caption="Accounts" columns={['Account', 'Kind', 'Roles', 'State', 'Two-factor']}>
          {users.map((user) => (
            <tr key={user.username}>
              <th scope="row">
                <a href={href('users', user.username)}>{user.username}</a>
              </th>
              <td>{user.service ? 'Service account' : 'User'}</td>
              <td>{user.roles.join(', ') || 'None'}</td>
              <td>
                <span class={`status status-${user.enabled ? 'ok' : 'off'}`}>{stateOf(user)}</span>
              </td>
              <td>{user.twoFactor ? 'On' : 'Off'}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
