/**
 * Users & Groups: the one place accounts are created, changed and deleted, used by both the
 * `tagd users …` command and the `/api/v2/Users` management routes. Every change goes through
 * the users database's lock (read-modify-write on the file, shared with other processes), is
 * audited (never with a password or token), and voids the account's tokens where the change
 * takes something away (disable, roles, password, two-factor). The last enabled administrator
 * who can sign in cannot be removed, disabled or demoted: checked under the lock, on the file as
 * it is, so the CLI and the API cannot both take away "the other" administrator at once.
 */
import type { Logger } from 'pino';
import { ConflictError, ValidationError } from '../errors.js';
import type { SecretBox } from '../profile/secret-box.js';
import { passwordProblems } from './account-service.js';
import { generatePassword, hashPassword } from './password.js';
import type { RoleName } from './permissions.js';
import type { TokenService } from './token-service.js';
import { newTotpSecret, totpUri } from './totp.js';
import type { AccountsGuard, UserRecord, UserStore } from './user-store.js';

/**
 * Account names: what the API, URLs and the audit log can carry without quoting trouble; no
 * leading '-', which would read as a command-line option.
 */
export const usernamePattern = /^[A-Za-z0-9_.@][A-Za-z0-9_.@-]{0,63}$/;

/**
 * Names the `/api/v2/Users/{name}` routes cannot take because fixed routes live there
 * (`GET /api/v2/Users/Refresh`, `POST /api/v2/Users/SignOut`, `…/Authenticate`, `…/Current/…`).
 * Compared without case, so `refresh` cannot be confused with `Refresh` either.
 */
export const reservedUsernames: readonly string[] = [
  'Authenticate',
  'Current',
  'Refresh',
  'SignOut',
];

/** An account as shown to administrators: never a hash, secret or token. */
export interface AccountView {
  id: string;
  username: string;
  /** A service account signs in only with a generated token. */
  service: boolean;
  roles: RoleName[];
  enabled: boolean;
  requiresPasswordChange: boolean;
  /** Whether TOTP two-factor is enrolled. */
  twoFactor: boolean;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** What an account is created with. */
export interface NewAccount {
  username: string;
  roles: RoleName[];
  /** A service account (no password; token from {@link UserManagement.generateToken}). */
  service: boolean;
  /**
   * A user's password. Absent: one is generated, returned once, and must be changed at the
   * first sign-in.
   */
  password?: string;
  /** Default true. */
  enabled?: boolean;
}

/** A change to an account; absent fields stay as they are. */
export interface AccountChange {
  roles?: RoleName[];
  enabled?: boolean;
  /** true forces a password change at the next sign-in (and ends today's sign-ins). */
  requiresPasswordChange?: boolean;
}

/** What {@link UserManagement} works with. */
export interface UserManagementDeps {
  users: UserStore;
  /** Issues service tokens; opened only when one is generated (the CLI creates no key otherwise). */
  tokens: () => Promise<TokenService>;
  /** The audit log (`component: audit`); a child carrying who acts (API user or OS account). */
  audit: Logger;
  /** Seals TOTP secrets (enrolment); opened only when needed. */
  secretBox?: () => Promise<SecretBox>;
}

/** Account administration shared by the CLI and the API. */
export class UserManagement {
  constructor(private readonly deps: UserManagementDeps) {}

  /** Every account, in creation order. */
  list(): AccountView[] {
    return this.deps.users.list().map(accountView);
  }

  /** One account. @throws NotFoundError */
  get(username: string): AccountView {
    return accountView(this.deps.users.require(username));
  }

  /**
   * Creates an account.
   * @returns the account, and for a user without a given password the generated one (shown once).
   * @throws ValidationError (name, reserved name, password), ConflictError `already-exists`.
   */
  async create(
    request: NewAccount,
    audit: Logger = this.deps.audit,
  ): Promise<{ account: AccountView; oneTimePassword?: string }> {
    const problems = usernameProblems(request.username);
    if (request.service && request.password !== undefined) {
      problems.push({ path: 'password', message: 'A service account has no password.' });
    }
    if (request.password !== undefined) {
      for (const problem of passwordProblems(request.password)) {
        problems.push({ ...problem, path: 'password' });
      }
    }
    if (problems.length > 0) throw new ValidationError('The account is not acceptable.', problems);
    const { username, roles } = request;
    const disabled = request.enabled === false;
    if (request.service) {
      const user = await this.deps.users.add({ username, kind: 'service', roles, disabled });
      audit.info({ event: 'account-created', username, kind: 'service', roles }, 'account created');
      return { account: accountView(user) };
    }
    const generated = request.password === undefined ? generatePassword() : undefined;
    const user = await this.deps.users.add({
      username,
      kind: 'user',
      roles,
      disabled,
      passwordHash: await hashPassword(request.password ?? (generated as string)),
      requiresPasswordChange: generated !== undefined,
    });
    audit.info({ event: 'account-created', username, kind: 'user', roles }, 'account created');
    return {
      account: accountView(user),
      ...(generated !== undefined ? { oneTimePassword: generated } : {}),
    };
  }

  /**
   * Changes roles, enabled and the forced password change. Disabling, a role change and forcing
   * a password change void the account's tokens at once; enabling does not (the disable did).
   * @throws NotFoundError, ConflictError `last-administrator`.
   */
  async update(
    username: string,
    change: AccountChange,
    audit: Logger = this.deps.audit,
  ): Promise<AccountView> {
    const user = this.deps.users.require(username);
    const fields: Partial<UserRecord> = {};
    const events: [Record<string, unknown>, string][] = [];
    let revoke = false;
    if (change.roles !== undefined && !sameRoles(change.roles, user.roles)) {
      fields.roles = [...new Set(change.roles)];
      revoke = true;
      events.push([
        { event: 'role-changed', username, roles: fields.roles, previousRoles: user.roles },
        'roles changed',
      ]);
    }
    if (change.enabled !== undefined && change.enabled === user.disabled) {
      fields.disabled = !change.enabled;
      if (fields.disabled) revoke = true;
      events.push([
        { event: change.enabled ? 'account-enabled' : 'account-disabled', username },
        `account ${change.enabled ? 'enabled' : 'disabled'}`,
      ]);
    }
    if (
      change.requiresPasswordChange !== undefined &&
      change.requiresPasswordChange !== user.requiresPasswordChange
    ) {
      if (user.kind !== 'user' && change.requiresPasswordChange) {
        throw new ValidationError('A service account has no password.', [
          { path: 'requiresPasswordChange', message: `'${username}' is a service account.` },
        ]);
      }
      fields.requiresPasswordChange = change.requiresPasswordChange;
      // The flag is read at sign-in: ending the sign-ins makes it apply now.
      if (change.requiresPasswordChange) revoke = true;
      events.push([
        {
          event: 'password-change-required',
          username,
          required: change.requiresPasswordChange,
        },
        'password change requirement set',
      ]);
    }
    if (events.length === 0) return accountView(user);
    await this.deps.users.update(user, fields, revoke, keepAnAdministrator(user.id));
    for (const [fieldsOfLine, message] of events) audit.info(fieldsOfLine, message);
    return accountView(user);
  }

  /** Deletes an account; its tokens stop working. @throws NotFoundError, ConflictError. */
  async remove(username: string, audit: Logger = this.deps.audit): Promise<void> {
    const user = this.deps.users.require(username);
    await this.deps.users.remove(user, keepAnAdministrator(user.id));
    audit.info({ event: 'account-deleted', username }, 'account deleted');
  }

  /**
   * Sets a user's password: the given one, or a generated one that must be changed at the next
   * sign-in. Every token of the account stops working.
   * @throws NotFoundError, ValidationError (service account, unacceptable password).
   */
  async setPassword(
    username: string,
    password: string | undefined,
    audit: Logger = this.deps.audit,
  ): Promise<{ password: string; generated: boolean }> {
    const user = this.deps.users.require(username);
    if (user.kind !== 'user') {
      throw new ValidationError(`'${username}' is a service account: it has no password.`, [
        { path: 'username', message: 'Service accounts use generated tokens.' },
      ]);
    }
    if (password !== undefined) {
      const problems = passwordProblems(password).map((problem) => ({
        ...problem,
        path: 'password',
      }));
      if (problems.length > 0) {
        throw new ValidationError('The password is not acceptable.', problems);
      }
    }
    const generated = password === undefined;
    const secret = password ?? generatePassword();
    await this.deps.users.update(
      user,
      { passwordHash: await hashPassword(secret), requiresPasswordChange: generated },
      true,
    );
    audit.info({ event: 'password-reset', username, generated }, 'password set');
    return { password: secret, generated };
  }

  /**
   * Generates a service account's token (shown once); the previous one stops working.
   * @throws NotFoundError, ValidationError for a user account.
   */
  async generateToken(username: string, audit: Logger = this.deps.audit): Promise<string> {
    const user = this.deps.users.require(username);
    if (user.kind !== 'service') {
      throw new ValidationError('Only service accounts have generated tokens.', [
        { path: 'username', message: `'${username}' is not a service account.` },
      ]);
    }
    await this.deps.users.update(user, {}, true);
    audit.info({ event: 'service-token-generated', username }, 'service token generated');
    return (await this.deps.tokens()).issue('service', user).token;
  }

  /**
   * Enrols (or replaces) TOTP two-factor; the account's tokens stop working, so no session
   * opened without the second factor outlives the enrolment.
   * @returns the `otpauth://` URI for an authenticator app (shown once).
   */
  async enableTwoFactor(
    username: string,
    audit: Logger = this.deps.audit,
  ): Promise<{ uri: string; replaced: boolean }> {
    const user = this.deps.users.require(username);
    if (user.kind !== 'user') {
      throw new ValidationError(
        `'${username}' is a service account: it does not sign in with a code.`,
        [{ path: 'username', message: 'Service accounts use generated tokens.' }],
      );
    }
    if (!this.deps.secretBox) throw new Error('two-factor enrolment needs the sealing key');
    const replaced = user.twoFactor !== undefined;
    const secret = newTotpSecret();
    const sealedSecret = (await this.deps.secretBox()).seal(secret);
    await this.deps.users.update(user, { twoFactor: { sealedSecret } }, true);
    audit.info({ event: 'two-factor-enabled', username, replaced }, 'two-factor enabled');
    return { uri: totpUri(username, secret), replaced };
  }

  /**
   * Removes two-factor (a lost phone); the account's tokens stop working.
   * @returns false when the account had none (nothing changed, nothing audited).
   */
  async removeTwoFactor(username: string, audit: Logger = this.deps.audit): Promise<boolean> {
    const user = this.deps.users.require(username);
    if (user.twoFactor === undefined) return false;
    await this.deps.users.update(user, { twoFactor: undefined }, true);
    audit.info({ event: 'two-factor-disabled', username }, 'two-factor disabled');
    return true;
  }
}

/** The administrator-facing view of a stored account. */
export function accountView(user: UserRecord): AccountView {
  return {
    id: user.id,
    username: user.username,
    service: user.kind === 'service',
    roles: [...user.roles],
    enabled: !user.disabled,
    requiresPasswordChange: user.requiresPasswordChange,
    twoFactor: user.twoFactor !== undefined,
    createdAt: user.createdAt,
  };
}

/** Why a new account name is refused, as field errors (path `username`). */
export function usernameProblems(username: string): { path: string; message: string }[] {
  if (!usernamePattern.test(username)) {
    return [
      {
        path: 'username',
        message: "1 to 64 letters, digits, '_', '.', '@' or '-', not starting with '-'.",
      },
    ];
  }
  const lower = username.toLowerCase();
  if (reservedUsernames.some((name) => name.toLowerCase() === lower)) {
    return [
      {
        path: 'username',
        message: `'${username}' is reserved (the API has fixed routes under /api/v2/Users/): not one of ${reservedUsernames.join(', ')}, in any case.`,
      },
    ];
  }
  return [];
}

// An administrator who can sign in and act: enabled, a person. A service account with the role
// can call the API but cannot recover a gateway whose people are all locked out.
function isActingAdministrator(user: UserRecord): boolean {
  return user.kind === 'user' && !user.disabled && user.roles.includes('Administrators');
}

/**
 * Refuses a change to account `id` that takes the last acting administrator away: it was one,
 * and none is left. A change to anyone else passes, also where none was left before.
 */
function keepAnAdministrator(id: string): AccountsGuard {
  return (after, before) => {
    const target = before.find((user) => user.id === id);
    if (!target || !isActingAdministrator(target)) return;
    if (after.some(isActingAdministrator)) return;
    throw new ConflictError(
      'last-administrator',
      'This is the last enabled administrator: add or enable another administrator first.',
    );
  };
}

function sameRoles(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((role, index) => role === b[index]);
}
