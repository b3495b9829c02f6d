import { randomUUID } from 'node:crypto';
import { type FSWatcher, watch } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import type { Logger } from 'pino';
import { ConflictError, NotFoundError } from '../errors.js';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { withFileLock } from '../state/file-lock.js';
import type { RoleName } from './permissions.js';

/**
 * Sign-ins (families) an account keeps; beyond, the oldest is dropped, and with it every token
 * of that sign-in.
 */
export const maxRefreshFamiliesPerAccount = 20;

/** File name of the users database in the state directory. */
export const usersFileName = 'users.json';

/** One account, as stored. */
export interface UserRecord {
  id: string;
  username: string;
  /** `service` accounts sign in only with a generated, non-expiring token. */
  kind: 'user' | 'service';
  roles: RoleName[];
  /** scrypt hash; absent for service accounts. */
  passwordHash?: string;
  disabled: boolean;
  /** Bumped by disabling, role and password changes and token regeneration: older tokens die. */
  tokenVersion: number;
  requiresPasswordChange: boolean;
  /** TOTP enrolment: the base32 secret sealed with the state key, and the last step used. */
  twoFactor?: { sealedSecret: string; lastUsedStep?: number };
  /**
   * Set to a new random id by `tagd users unlock`: a daemon that sees a value it has not applied
   * yet clears the account's failed sign-ins (the limiter lives in the daemon's memory).
   */
  signInUnlock?: string;
  /**
   * The console theme the account chose (`PUT /api/v2/Users/Current/Theme`); absent: the
   * plant default, or the browser's light or dark setting.
   */
  theme?: string;
  createdAt: string;
}

/**
 * One sign-in: the chain of rotating refresh tokens and every access token issued from it
 * (their `fam` claim). A token is accepted only while its family is here, so dropping the family
 * (refresh-token reuse, sign-out, password change, disabling, the absolute deadline) ends them
 * all at once, in every process and across restarts. Only live families are kept, so the list is
 * bounded by {@link maxRefreshFamiliesPerAccount} per account and pruned at each deadline.
 */
export interface RefreshFamily {
  id: string;
  userId: string;
  /** jti of the only refresh token of this family still accepted. */
  currentJti: string;
  /**
   * Epoch ms of the sign-in's absolute deadline (password check + session lifetime); no token
   * of the family is valid after it, so the family is dropped then.
   */
  expiresAt: number;
  revoked: boolean;
}

interface UsersData {
  users: UserRecord[];
  refreshFamilies: RefreshFamily[];
}

/**
 * A check run under the lock on the accounts as they would be after a change, before it is
 * saved; it throws to refuse the change (e.g. the last administrator), and nothing is written.
 */
export type AccountsGuard = (after: readonly UserRecord[], before: readonly UserRecord[]) => void;

/** Options of {@link UserStore}. */
export interface UserStoreOptions {
  stateDir: string;
  /** Follow changes made by other processes (`tagd users …` while the daemon runs). Default false. */
  watch?: boolean;
  logger?: Logger;
  /** Epoch ms now, for pruning expired refresh families. Default Date.now. */
  now?: () => number;
}

/**
 * The accounts database: a lowdb JSON file in the state directory (mode 0600), written
 * atomically. The daemon watches it, so an account disabled with the CLI loses its tokens at
 * once. Lookups are in memory.
 *
 * Account names are case-insensitive: a name keeps the case it was created with, any case finds
 * it, and no account can be added whose name differs from another's only in case. A file from
 * before this rule may hold such names: each is then found by its exact name only (another case
 * would be ambiguous), and start() logs a warning naming them.
 */
export class UserStore {
  private readonly db: Low<UsersData>;
  private watcher: FSWatcher | undefined;
  private byName = new Map<string, UserRecord>();
  // By folded name (see nameKey); more than one only in a file from before the rule.
  private byFoldedName = new Map<string, UserRecord[]>();
  private byId = new Map<string, UserRecord>();
  // Every request with an access token looks its family up: a map, not a scan.
  private families = new Map<string, RefreshFamily>();
  private readonly lockFile: string;
  private readonly changeListeners = new Set<() => void>();
  // Serializes this process's own changes; the lock file serializes them with other processes.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: UserStoreOptions) {
    this.db = new Low<UsersData>(new DurableJsonFile(join(options.stateDir, usersFileName)), {
      users: [],
      refreshFamilies: [],
    });
    this.lockFile = join(options.stateDir, `${usersFileName}.lock`);
  }

  /** Reads the database (an absent file is an empty one) and starts watching if asked. */
  async start(): Promise<void> {
    await mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });
    await this.reload();
    for (const same of this.byFoldedName.values()) {
      if (same.length < 2) continue;
      this.options.logger?.warn(
        { usernames: same.map((user) => user.username) },
        'accounts whose names differ only in case: each signs in with its exact name only; remove or disable all but one (tagd users remove NAME)',
      );
    }
    if (this.options.watch && !this.watcher) {
      // Watch the folder, not the file: an atomic save replaces the file's inode.
      this.watcher = watch(this.options.stateDir, (_event, name) => {
        if (name === usersFileName) {
          // Through the queue, so reloads finish in the order they started and never race a save.
          const run = this.queue.then(() => this.reload());
          this.queue = run.catch((error) =>
            this.options.logger?.error({ err: error }, 'users reload failed'),
          );
        }
      });
    }
  }

  /** Stops watching. */
  async stop(): Promise<void> {
    this.watcher?.close();
    this.watcher = undefined;
  }

  /**
   * Calls `listener` after every (re)load of the accounts: a change made here, or by another
   * process when watching. Open streams re-check their caller on it, so a sign-out or a
   * disabled account ends them at once. Returns the function that unsubscribes.
   */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Re-reads the file. */
  async reload(): Promise<void> {
    try {
      await this.db.read();
    } catch (error) {
      if ((error as { code?: string }).code !== 'profile-not-found') throw error;
      this.db.data = { users: [], refreshFamilies: [] };
    }
    this.index();
  }

  /** Every account, in creation order. */
  list(): readonly UserRecord[] {
    return this.db.data.users;
  }

  /**
   * The account of that name in any case, if any: the exact name first, then the one account
   * whose name differs only in case (none when several do).
   */
  findByName(username: string): UserRecord | undefined {
    const exact = this.byName.get(username);
    if (exact) return exact;
    const same = this.byFoldedName.get(nameKey(username));
    return same?.length === 1 ? same[0] : undefined;
  }

  /** The account of that id, if any. */
  findById(id: string): UserRecord | undefined {
    return this.byId.get(id);
  }

  /** The account of that name. @throws NotFoundError */
  require(username: string): UserRecord {
    const user = this.findByName(username);
    if (!user) throw new NotFoundError(`No account named '${username}'.`);
    return user;
  }

  /** Adds an account. @throws ConflictError when the name is taken, in any case. */
  async add(
    fields: Pick<UserRecord, 'username' | 'kind' | 'roles'> & Partial<UserRecord>,
  ): Promise<UserRecord> {
    return this.mutate((data) => {
      const key = nameKey(fields.username);
      const taken = data.users.find((user) => nameKey(user.username) === key);
      if (taken) {
        throw new ConflictError(
          'already-exists',
          taken.username === fields.username
            ? `An account named '${taken.username}' exists.`
            : `An account named '${taken.username}' exists (names are compared without case).`,
        );
      }
      const user: UserRecord = {
        id: randomUUID(),
        disabled: false,
        tokenVersion: 1,
        requiresPasswordChange: false,
        createdAt: new Date().toISOString(),
        ...fields,
      };
      data.users.push(user);
      return user;
    });
  }

  /**
   * Changes an account and saves. A key given as `undefined` is removed (e.g. `twoFactor`).
   * With `revokeTokens`, its token version is bumped so every token issued before stops
   * working. `user` is updated to the saved state.
   * @throws NotFoundError when the account was removed meanwhile.
   */
  async update(
    user: UserRecord,
    change: Partial<UserRecord>,
    revokeTokens: boolean,
    guard?: AccountsGuard,
  ): Promise<UserRecord> {
    const saved = await this.mutate((data) => {
      const fresh = data.users.find((candidate) => candidate.id === user.id);
      if (!fresh) throw new NotFoundError(`No account named '${user.username}'.`);
      if (guard) {
        const projected = { ...fresh };
        applyChange(projected, change);
        guard(
          data.users.map((candidate) => (candidate === fresh ? projected : candidate)),
          data.users,
        );
      }
      applyChange(fresh, change);
      if (revokeTokens) {
        fresh.tokenVersion += 1;
        data.refreshFamilies = data.refreshFamilies.filter((family) => family.userId !== fresh.id);
      }
      return fresh;
    });
    applyChange(user, saved);
    for (const key of Object.keys(change) as (keyof UserRecord)[]) {
      if (change[key] === undefined) delete user[key];
    }
    return user;
  }

  /**
   * Deletes an account and its sign-ins, so its tokens stop working at once.
   * @throws NotFoundError when it was removed meanwhile; whatever `guard` throws.
   */
  async remove(user: UserRecord, guard?: AccountsGuard): Promise<void> {
    await this.mutate((data) => {
      const remaining = data.users.filter((candidate) => candidate.id !== user.id);
      if (remaining.length === data.users.length) {
        throw new NotFoundError(`No account named '${user.username}'.`);
      }
      guard?.(remaining, data.users);
      data.users = remaining;
      data.refreshFamilies = data.refreshFamilies.filter((family) => family.userId !== user.id);
    });
  }

  /**
   * Records a two-factor time step as used, unless it (or a later one) was used already: the
   * check and the write happen under the lock, so a code cannot be used twice even by two
   * processes at once.
   * @returns whether the step was claimed.
   */
  async claimTotpStep(user: UserRecord, step: number): Promise<boolean> {
    return this.mutate((data) => {
      const fresh = data.users.find((candidate) => candidate.id === user.id);
      if (!fresh?.twoFactor) return false;
      if (step <= (fresh.twoFactor.lastUsedStep ?? Number.NEGATIVE_INFINITY)) return false;
      fresh.twoFactor.lastUsedStep = step;
      return true;
    });
  }

  /** Starts a refresh family for a sign-in. */
  async addRefreshFamily(family: RefreshFamily): Promise<void> {
    await this.mutate((data) => {
      data.refreshFamilies.push(family);
      // An account keeps its newest sign-ins only, so users.json cannot grow without bound.
      const own = data.refreshFamilies.filter((candidate) => candidate.userId === family.userId);
      const excess = new Set(own.slice(0, Math.max(0, own.length - maxRefreshFamiliesPerAccount)));
      if (excess.size > 0) {
        data.refreshFamilies = data.refreshFamilies.filter((candidate) => !excess.has(candidate));
      }
    });
  }

  /** The live sign-in family of that id, if any (revoked and expired ones are dropped). */
  findRefreshFamily(id: string): RefreshFamily | undefined {
    return this.families.get(id);
  }

  /**
   * Rotates a refresh family from `expectedJti` to `nextJti`, or revokes it when `expectedJti`
   * is no longer current (a reused token). Decided under the lock on fresh data. The family's
   * deadline does not move: rotation never extends a sign-in.
   * @returns `rotated`, `revoked` (reuse detected now) or `gone` (unknown or already revoked).
   */
  async rotateRefreshFamily(
    id: string,
    expectedJti: string,
    nextJti: string,
  ): Promise<'rotated' | 'revoked' | 'gone'> {
    return this.mutate((data) => {
      const family = data.refreshFamilies.find((candidate) => candidate.id === id);
      if (!family || family.revoked) return 'gone';
      if (family.currentJti !== expectedJti) {
        family.revoked = true;
        return 'revoked';
      }
      family.currentJti = nextJti;
      return 'rotated';
    });
  }

  /**
   * Ends a sign-in (sign-out): its family is dropped, so its access and refresh tokens stop
   * working at once.
   * @returns whether the family was still live.
   */
  async revokeRefreshFamily(id: string): Promise<boolean> {
    return this.mutate((data) => {
      const family = data.refreshFamilies.find((candidate) => candidate.id === id);
      if (!family || family.revoked) return false;
      family.revoked = true;
      return true;
    });
  }

  // Read-modify-write on the file's current contents under the lock, so changes made by
  // another process since our last read are kept, not overwritten by a stale copy.
  private mutate<T>(change: (data: UsersData) => T): Promise<T> {
    const run = this.queue.then(() =>
      withFileLock(this.lockFile, async () => {
        await this.reload();
        const result = change(this.db.data);
        const now = (this.options.now ?? Date.now)();
        // Expired and revoked families serve no one; users.json must not grow with them. A
        // revoked family is dropped, not kept as a deny-list entry: tokens need a live family.
        this.db.data.refreshFamilies = this.db.data.refreshFamilies.filter(
          (family) => family.expiresAt > now && !family.revoked,
        );
        await this.db.write();
        this.index();
        return result;
      }),
    );
    this.queue = run.catch(() => undefined);
    return run;
  }

  private index(): void {
    this.byName = new Map(this.db.data.users.map((user) => [user.username, user]));
    this.byFoldedName = new Map();
    for (const user of this.db.data.users) {
      const key = nameKey(user.username);
      const same = this.byFoldedName.get(key);
      if (same) same.push(user);
      else this.byFoldedName.set(key, [user]);
    }
    this.byId = new Map(this.db.data.users.map((user) => [user.id, user]));
    // A family past its deadline stays until the next save; callers check `expiresAt` (and its
    // tokens have expired with it anyway).
    this.families = new Map(
      this.db.data.refreshFamilies
        .filter((family) => !family.revoked)
        .map((family) => [family.id, family]),
    );
    for (const listener of this.changeListeners) {
      try {
        listener();
      } catch (error) {
        this.options.logger?.error({ err: error }, 'users change listener failed');
      }
    }
  }
}

// Object.assign, except that a key given as undefined is deleted, so JSON holds no trace of it.
function applyChange(target: UserRecord, change: Partial<UserRecord>): void {
  for (const [key, value] of Object.entries(change) as [keyof UserRecord, unknown][]) {
    if (value === undefined) delete target[key];
    else (target as unknown as Record<string, unknown>)[key] = value;
  }
}

/**
 * The form account names are compared in: lower case. Names are ASCII (usernamePattern), and
 * a file from before that rule is compared the same way.
 */
export function nameKey(username: string): string {
  return username.toLowerCase();
}
