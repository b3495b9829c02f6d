import { randomUUID } from 'node:crypto';
import { chmod, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  ConflictError,
  CredentialsRefusedError,
  ForbiddenError,
  TooManyRequestsError,
  UnauthorizedError,
  ValidationError,
} from '../errors.js';
import type { SecretBox } from '../profile/secret-box.js';
import {
  decoyHash,
  generatePassword,
  hashPassword,
  maxPasswordLength,
  minPasswordLength,
  verifyPassword,
} from './password.js';
import { type Permission, permissionsOf } from './permissions.js';
import type { SignInLimiter } from './sign-in-limiter.js';
import type {
  PreAuthStage,
  SignInClaims,
  TokenClaims,
  TokenService,
  TokenType,
} from './token-service.js';
import { matchTotpStep, newTotpSecret, totpUri } from './totp.js';
import type { UserRecord, UserStore } from './user-store.js';

/** The sign-in response (spec §2.1). */
export interface SignInResponse {
  token?: string;
  refreshToken?: string;
  username: string;
  id: string;
  permissions: Permission[];
  preAuthToken?: string;
  requiresTwoFactor?: boolean;
  requiresPasswordChange?: boolean;
}

/** Who is calling, resolved from a token on every request. */
export interface Principal {
  user: UserRecord;
  claims: TokenClaims;
  permissions: ReadonlySet<Permission>;
}

/** File in the state directory holding the first admin password (0600). */
export const initialAdminPasswordFile = 'initial-admin-password';
/** Name of the account a first start creates. */
export const initialAdminName = 'admin';
/** Wrong two-factor codes one preauth token (or one pending enrolment) survives. */
const maxTwoFactorFailures = 5;
/** How long a self-service two-factor enrolment waits for its first code: 10 minutes, in ms. */
export const pendingEnrolmentMs = 10 * 60_000;

/** A self-service two-factor enrolment started and not yet confirmed. */
export interface PendingEnrolment {
  /** The `otpauth://` URI for an authenticator app. */
  uri: string;
  /** When it expires unconfirmed, epoch ms. */
  expiresAt: number;
}

/** What {@link AccountService} works with. */
export interface AccountServiceDeps {
  users: UserStore;
  tokens: TokenService;
  limiter: SignInLimiter;
  secretBox: SecretBox;
  /** The audit log: sign-ins, token generation, role and configuration changes. */
  audit: Logger;
  /** Epoch ms now. */
  now: () => number;
  /** State directory, where the first-start admin password file is removed once changed. */
  stateDir?: string;
}

/**
 * Sign-in, two-factor, password change, token refresh, sign-out and per-request authentication
 * (docs/security.md, "Accounts and tokens"). Every token is checked against its account on every use: a disabled account
 * or a bumped token version rejects it at once. Access and refresh tokens are also checked
 * against their sign-in family, which a refresh-token reuse, a sign-out, a password change or
 * disabling ends, and which ends by itself at the session lifetime after the password check.
 * Service tokens belong to no sign-in: they have no family and no expiry.
 */
export class AccountService {
  // Per account record (a reload makes new records), so a request does not rebuild the set.
  private readonly permissionCache = new WeakMap<
    UserRecord,
    { roles: readonly string[]; permissions: ReadonlySet<Permission> }
  >();
  // preauth jti → wrong codes so far; a preauth token lives minutes, so this stays small.
  private readonly twoFactorFailures = new Map<string, { count: number; expiresAt: number }>();
  // account id → the secret of an enrolment awaiting its first code. Kept in memory only and
  // briefly: a restart merely asks the person to start again.
  private readonly pendingEnrolments = new Map<
    string,
    { secret: string; expiresAt: number; failures: number }
  >();
  // account id → the `signInUnlock` mark last applied to the limiter; one entry per account.
  private readonly appliedUnlocks = new Map<string, string>();

  constructor(private readonly deps: AccountServiceDeps) {}

  /**
   * Stores the console theme the account chose, or forgets it (`undefined`: the plant default,
   * or the browser's light or dark setting). The name is checked by the caller. Audited.
   */
  async setTheme(principal: Principal, theme: string | undefined): Promise<void> {
    const { user } = principal;
    await this.deps.users.update(user, { theme }, false);
    this.deps.audit.info(
      { event: 'theme-chosen', username: user.username, theme: theme ?? null },
      'account theme chosen',
    );
  }

  /**
   * Checks a username and password from `address`.
   * @throws TooManyRequestsError while the account or address is limited; UnauthorizedError.
   */
  async signIn(username: string, password: string, address: string): Promise<SignInResponse> {
    const { users, limiter, audit } = this.deps;
    const user = users.findByName(username);
    if (user) this.applyUnlock(user);
    const wait = limiter.retryAfterSeconds(username, address);
    if (wait > 0) {
      audit.warn(
        { event: 'sign-in-limited', username, address },
        'sign-in refused: too many failures',
      );
      throw new TooManyRequestsError('Too many failed sign-ins; try again later.', wait);
    }
    const hash = user?.passwordHash ?? (await decoyHash());
    const matches = password.length <= maxPasswordLength && (await verifyPassword(password, hash));
    if (!user || !matches || user.kind !== 'user' || user.disabled) {
      limiter.recordFailure(username, address);
      audit.warn({ event: 'sign-in-failed', username, address }, 'sign-in failed');
      throw new UnauthorizedError('Wrong username or password.');
    }
    // With two-factor pending, the failures stay counted until the code is right too.
    if (!user.twoFactor) limiter.recordSuccess(username);
    audit.info({ event: 'sign-in', username, address }, 'signed in');
    return this.nextStep(user, user.twoFactor ? 'twoFactor' : undefined);
  }

  /**
   * Completes two-factor with a TOTP code. A code's time step is accepted once; five wrong
   * codes void the preauth token, and every wrong code counts against the account's and the
   * address's sign-in limits, so new preauth tokens do not buy new guesses.
   * @throws TooManyRequestsError while limited; UnauthorizedError.
   */
  async completeTwoFactor(
    preAuthToken: string,
    code: string,
    address: string,
  ): Promise<SignInResponse> {
    const principal = this.authenticate(preAuthToken, ['preauth']);
    const { user, claims } = principal;
    if (claims.stage !== 'twoFactor' || !user.twoFactor) {
      throw new UnauthorizedError('This token does not allow a two-factor step.');
    }
    this.forgetExpiredTwoFactorFailures();
    const failures = this.twoFactorFailures.get(claims.jti)?.count ?? 0;
    if (failures >= maxTwoFactorFailures) {
      throw new UnauthorizedError('Too many wrong codes; sign in again.');
    }
    this.applyUnlock(user);
    const wait = this.deps.limiter.retryAfterSeconds(user.username, address);
    if (wait > 0) {
      throw new TooManyRequestsError('Too many failed attempts; try again later.', wait);
    }
    const secret = this.deps.secretBox.unseal(
      user.twoFactor.sealedSecret,
      `users.${user.username}.twoFactor`,
    );
    const step = matchTotpStep(user.username, secret, code, this.deps.now());
    const lastUsed = user.twoFactor.lastUsedStep ?? Number.NEGATIVE_INFINITY;
    // Claimed under the users lock: a second use of the step, even from another process, fails.
    const accepted =
      step !== undefined && step > lastUsed && (await this.deps.users.claimTotpStep(user, step));
    if (!accepted) {
      this.twoFactorFailures.set(claims.jti, {
        count: failures + 1,
        expiresAt: (claims.exp ?? 0) * 1000,
      });
      this.deps.limiter.recordFailure(user.username, address);
      this.deps.audit.warn(
        { event: 'two-factor-failed', username: user.username, address },
        'two-factor code refused',
      );
      throw new UnauthorizedError(
        failures + 1 >= maxTwoFactorFailures
          ? 'Too many wrong codes; sign in again.'
          : 'Wrong or already used code.',
      );
    }
    this.twoFactorFailures.delete(claims.jti);
    this.deps.limiter.recordSuccess(user.username);
    return this.nextStep(user, undefined);
  }

  /**
   * Changes the caller's password; every older token of the account stops working.
   * @param principal from a preauth (passwordChange) or access token.
   */
  async changePassword(
    principal: Principal,
    currentPassword: string,
    newPassword: string,
    address: string,
  ): Promise<SignInResponse> {
    const { user, claims } = principal;
    if (claims.typ === 'preauth' && claims.stage !== 'passwordChange') {
      throw new UnauthorizedError('Complete two-factor first.');
    }
    if (user.kind !== 'user' || !user.passwordHash)
      throw new UnauthorizedError('This account has no password.');
    this.applyUnlock(user);
    const wait = this.deps.limiter.retryAfterSeconds(user.username, address);
    if (wait > 0)
      throw new TooManyRequestsError('Too many failed attempts; try again later.', wait);
    if (!(await verifyPassword(currentPassword.slice(0, maxPasswordLength), user.passwordHash))) {
      this.deps.limiter.recordFailure(user.username, address);
      this.deps.audit.warn(
        { event: 'password-change-failed', username: user.username, address },
        'wrong current password',
      );
      throw new UnauthorizedError('The current password is wrong.');
    }
    const problems = passwordProblems(newPassword, currentPassword);
    if (problems.length > 0)
      throw new ValidationError('The new password is not acceptable.', problems);
    await this.deps.users.update(
      user,
      { passwordHash: await hashPassword(newPassword), requiresPasswordChange: false },
      true,
    );
    this.deps.audit.info(
      { event: 'password-changed', username: user.username, address },
      'password changed',
    );
    if (this.deps.stateDir && user.username === initialAdminName) {
      // The first-start password is void now; leaving it on disk would only invite confusion.
      await unlink(join(this.deps.stateDir, initialAdminPasswordFile)).catch(() => undefined);
    }
    return this.issueSession(user);
  }

  /**
   * Starts the caller's own two-factor enrolment once its password is checked: a new secret is
   * kept pending (in memory, {@link pendingEnrolmentMs}) until a code from it confirms it. A new
   * start replaces a pending one. An enrolled account must remove its two-factor first (which
   * takes a code of it), so a stolen session plus password cannot move the second factor.
   * @throws ForbiddenError for a service account; TooManyRequestsError; CredentialsRefusedError;
   *   ConflictError (`two-factor-state`) when already enrolled.
   */
  async startTwoFactorEnrolment(
    principal: Principal,
    password: string,
    address: string,
  ): Promise<PendingEnrolment> {
    const user = this.personOf(principal);
    await this.checkOwnPassword(user, password, address, 'two-factor-enrolment-refused');
    if (user.twoFactor) {
      throw new ConflictError(
        'two-factor-state',
        'Two-factor is already enrolled: remove it first (with a code from the authenticator).',
      );
    }
    const secret = newTotpSecret();
    const expiresAt = this.deps.now() + pendingEnrolmentMs;
    this.pendingEnrolments.set(user.id, { secret, expiresAt, failures: 0 });
    this.deps.audit.info(
      { event: 'two-factor-enrolment-started', username: user.username, address },
      'two-factor enrolment started',
    );
    return { uri: totpUri(user.username, secret), expiresAt };
  }

  /**
   * Confirms the caller's pending enrolment with a code from its secret: the account is enrolled
   * and, as with `tagd users 2fa enable`, every token issued before stops working; the caller
   * gets a new sign-in (it has just given its password and a code), so only the browser or
   * client that enrolled stays signed in. Wrong codes count against the sign-in limits; five
   * void the enrolment.
   * @throws ForbiddenError; TooManyRequestsError; CredentialsRefusedError; ConflictError
   *   (`two-factor-state`) when nothing is pending.
   */
  async confirmTwoFactorEnrolment(
    principal: Principal,
    code: string,
    address: string,
  ): Promise<SignInResponse> {
    const user = this.personOf(principal);
    const pending = this.pendingEnrolments.get(user.id);
    if (!pending || pending.expiresAt <= this.deps.now()) {
      this.pendingEnrolments.delete(user.id);
      throw new ConflictError(
        'two-factor-state',
        'No two-factor enrolment is pending (it expires after 10 minutes): start again.',
      );
    }
    this.refuseWhileLimited(user, address);
    const step = matchTotpStep(user.username, pending.secret, code, this.deps.now());
    if (step === undefined) {
      pending.failures += 1;
      const voided = pending.failures >= maxTwoFactorFailures;
      if (voided) this.pendingEnrolments.delete(user.id);
      this.deps.limiter.recordFailure(user.username, address);
      this.deps.audit.warn(
        { event: 'two-factor-enrolment-failed', username: user.username, address, voided },
        'two-factor enrolment code refused',
      );
      throw new CredentialsRefusedError(
        'code',
        voided
          ? 'Too many wrong codes: the enrolment is void; start again.'
          : 'Wrong code: check the authenticator app and the clocks.',
      );
    }
    this.pendingEnrolments.delete(user.id);
    const sealedSecret = this.deps.secretBox.seal(pending.secret);
    // The confirming code's step counts as used: it cannot sign in a second time.
    await this.deps.users.update(user, { twoFactor: { sealedSecret, lastUsedStep: step } }, true);
    this.deps.audit.info(
      { event: 'two-factor-enabled', username: user.username, address, self: true },
      'two-factor enabled',
    );
    return this.issueSession(user);
  }

  /**
   * Removes the caller's own two-factor, with its password and a current code; every token
   * issued before stops working and the caller gets a new sign-in, as on enrolment.
   * @throws ForbiddenError; TooManyRequestsError; CredentialsRefusedError; ConflictError
   *   (`two-factor-state`) when none is enrolled.
   */
  async removeOwnTwoFactor(
    principal: Principal,
    password: string,
    code: string,
    address: string,
  ): Promise<SignInResponse> {
    const user = this.personOf(principal);
    await this.checkOwnPassword(user, password, address, 'two-factor-removal-refused');
    const enrolled = user.twoFactor;
    if (!enrolled) {
      throw new ConflictError('two-factor-state', 'This account has no two-factor to remove.');
    }
    const secret = this.deps.secretBox.unseal(
      enrolled.sealedSecret,
      `users.${user.username}.twoFactor`,
    );
    const step = matchTotpStep(user.username, secret, code, this.deps.now());
    const accepted =
      step !== undefined &&
      step > (enrolled.lastUsedStep ?? Number.NEGATIVE_INFINITY) &&
      (await this.deps.users.claimTotpStep(user, step));
    if (!accepted) {
      this.deps.limiter.recordFailure(user.username, address);
      this.deps.audit.warn(
        { event: 'two-factor-removal-refused', username: user.username, address },
        'wrong two-factor code',
      );
      throw new CredentialsRefusedError('code', 'Wrong or already used code.');
    }
    await this.deps.users.update(user, { twoFactor: undefined }, true);
    this.deps.audit.info(
      { event: 'two-factor-disabled', username: user.username, address, self: true },
      'two-factor disabled',
    );
    return this.issueSession(user);
  }

  /** Whether the caller has a self-service enrolment pending (not expired). */
  enrolmentPending(principal: Principal): boolean {
    const pending = this.pendingEnrolments.get(principal.user.id);
    return pending !== undefined && pending.expiresAt > this.deps.now();
  }

  /**
   * Renews a session within its sign-in. An access token gets a new access token; a refresh
   * token rotates (new access and refresh token), and a refresh token used twice revokes its
   * whole family, access tokens included. Either way the new tokens keep the sign-in's family
   * and expire at its absolute deadline at the latest: only a password check starts a new one.
   */
  async refresh(token: string): Promise<SignInResponse> {
    const { user, claims } = this.authenticate(token, ['access', 'refresh']);
    const signIn = signInOf(claims);
    if (claims.typ === 'access') {
      return {
        ...this.identity(user),
        token: this.deps.tokens.issue('access', user, { signIn }).token,
      };
    }
    const refresh = this.deps.tokens.issue('refresh', user, { signIn });
    // Decided under the users lock, so two uses of one refresh token cannot both rotate.
    const outcome = await this.deps.users.rotateRefreshFamily(
      signIn.fam,
      claims.jti,
      refresh.claims.jti,
    );
    if (outcome === 'revoked') {
      this.deps.audit.warn(
        { event: 'refresh-reuse', username: user.username, family: signIn.fam },
        'a rotated refresh token was used again: its sign-in is revoked',
      );
    }
    if (outcome !== 'rotated') throw new UnauthorizedError('The refresh token has been revoked.');
    return {
      ...this.identity(user),
      token: this.deps.tokens.issue('access', user, { signIn }).token,
      refreshToken: refresh.token,
    };
  }

  /**
   * Ends the caller's sign-in: its family is revoked, so every access and refresh token of it
   * stops working at once; the account's other sign-ins go on.
   * @param principal from an access or refresh token (service tokens belong to no sign-in).
   */
  async signOut(principal: Principal, address: string): Promise<void> {
    const { user, claims } = principal;
    const { fam } = signInOf(claims);
    await this.deps.users.revokeRefreshFamily(fam);
    this.deps.audit.info(
      { event: 'sign-out', username: user.username, address, family: fam },
      'signed out',
    );
  }

  /**
   * Resolves a token to its account, checking signature, type, expiry, that the account exists
   * and is enabled, and that its token version still matches.
   * @throws UnauthorizedError
   */
  authenticate(token: string, types: readonly TokenType[]): Principal {
    const claims = this.deps.tokens.verify(token, types);
    const user = this.deps.users.findById(claims.sub);
    if (!user || user.disabled || user.tokenVersion !== claims.ver) {
      throw new UnauthorizedError('The token has been revoked.');
    }
    if (claims.typ === 'service' && user.kind !== 'service')
      throw new UnauthorizedError('The token is invalid.');
    if (claims.fam !== undefined) {
      // The sign-in must still be live: a revoked family ends its access tokens too.
      const family = this.deps.users.findRefreshFamily(claims.fam);
      if (!family || family.userId !== user.id || family.expiresAt <= this.deps.now()) {
        throw new UnauthorizedError('The token has been revoked.');
      }
    }
    return { user, claims, permissions: this.permissionsOf(user) };
  }

  /**
   * Whether a caller resolved earlier by {@link authenticate} may still act, without verifying
   * the token's signature again: the token has not expired, its account exists, is enabled and
   * has the same token version (no role or password change, no disable since), and its sign-in
   * is live (no sign-out, no reuse). Long-lived answers (tag streams) ask this on every batch.
   */
  stillValid(principal: Principal): boolean {
    const { claims } = principal;
    const now = this.deps.now();
    if (claims.exp !== undefined && claims.exp * 1000 <= now) return false;
    const user = this.deps.users.findById(claims.sub);
    if (!user || user.disabled || user.tokenVersion !== claims.ver) return false;
    if (claims.fam === undefined) return true;
    const family = this.deps.users.findRefreshFamily(claims.fam);
    return family !== undefined && family.userId === user.id && family.expiresAt > now;
  }

  /**
   * Calls `listener` whenever the accounts change (here or, when the store watches its file,
   * through `tagd users …`). Returns the function that unsubscribes.
   */
  onAccountsChange(listener: () => void): () => void {
    return this.deps.users.onChange(listener);
  }

  /** Expiry of an access or refresh token this service just issued, epoch ms (for cookies). */
  tokenExpiresAt(token: string): number {
    const { exp } = this.deps.tokens.verify(token, ['access', 'refresh']);
    return (exp ?? 0) * 1000;
  }

  /** End of the sign-in of an access or refresh token, epoch ms (for the CSRF cookie). */
  signInEndsAt(token: string): number {
    const { authTime } = signInOf(this.deps.tokens.verify(token, ['access', 'refresh']));
    return this.deps.tokens.sessionEnd(authTime) * 1000;
  }

  /** Generates a service account's token (shown once); the previous one stops working. */
  async generateServiceToken(username: string): Promise<string> {
    const user = this.deps.users.require(username);
    if (user.kind !== 'service') {
      throw new ValidationError('Only service accounts have generated tokens.', [
        { path: 'username', message: `'${username}' is not a service account.` },
      ]);
    }
    await this.deps.users.update(user, {}, true);
    this.deps.audit.info({ event: 'service-token-generated', username }, 'service token generated');
    return this.deps.tokens.issue('service', user).token;
  }

  /**
   * On a first start (no accounts), creates `admin` with a random password that must be
   * changed at first sign-in, writes it to a 0600 file in the state directory and logs it once.
   */
  async createInitialAdmin(stateDir: string, logger: Logger): Promise<void> {
    if (this.deps.users.list().length > 0) return;
    const password = generatePassword();
    await this.deps.users.add({
      username: initialAdminName,
      kind: 'user',
      roles: ['Administrators'],
      passwordHash: await hashPassword(password),
      requiresPasswordChange: true,
    });
    const file = join(stateDir, initialAdminPasswordFile);
    await writeFile(file, `${password}\n`, { mode: 0o600 });
    // writeFile's mode applies only to a new file; a leftover must not keep a wider one.
    await chmod(file, 0o600);
    this.deps.audit.info(
      { event: 'account-created', username: 'admin' },
      'initial admin account created',
    );
    // The one time a password is logged, by design: a headless first start must show it somewhere.
    // `inEventView: false`: the console's event view (recent-events.ts) never shows this line.
    logger.warn(
      { inEventView: false },
      `First start: created account 'admin' with password ${password} (also in ${file}); it must be changed at first sign-in.`,
    );
  }

  private async nextStep(
    user: UserRecord,
    stage: PreAuthStage | undefined,
  ): Promise<SignInResponse> {
    const pending = stage ?? (user.requiresPasswordChange ? 'passwordChange' : undefined);
    if (pending === undefined) return this.issueSession(user);
    return {
      ...this.identity(user),
      preAuthToken: this.deps.tokens.issue('preauth', user, { stage: pending }).token,
      ...(pending === 'twoFactor' ? { requiresTwoFactor: true } : {}),
      ...(pending === 'passwordChange' || user.requiresPasswordChange
        ? { requiresPasswordChange: true }
        : {}),
    };
  }

  // A new sign-in: called only right after the password (and code) was checked, so its
  // absolute deadline counts from now.
  private async issueSession(user: UserRecord): Promise<SignInResponse> {
    const { tokens } = this.deps;
    const signIn = { fam: randomUUID(), authTime: Math.floor(this.deps.now() / 1000) };
    const refresh = tokens.issue('refresh', user, { signIn });
    await this.deps.users.addRefreshFamily({
      id: signIn.fam,
      userId: user.id,
      currentJti: refresh.claims.jti,
      expiresAt: tokens.sessionEnd(signIn.authTime) * 1000,
      revoked: false,
    });
    return {
      ...this.identity(user),
      token: tokens.issue('access', user, { signIn }).token,
      refreshToken: refresh.token,
    };
  }

  // Self-service two-factor is for people: a service account signs in with a generated token.
  private personOf(principal: Principal): UserRecord {
    const { user } = principal;
    if (user.kind !== 'user' || !user.passwordHash) {
      throw new ForbiddenError(
        'A service account signs in with a generated token: it has no two-factor.',
      );
    }
    return user;
  }

  private refuseWhileLimited(user: UserRecord, address: string): void {
    this.applyUnlock(user);
    const wait = this.deps.limiter.retryAfterSeconds(user.username, address);
    if (wait > 0)
      throw new TooManyRequestsError('Too many failed attempts; try again later.', wait);
  }

  // The password that confirms an account's own action; a wrong one counts as a failed sign-in.
  private async checkOwnPassword(
    user: UserRecord,
    password: string,
    address: string,
    event: string,
  ): Promise<void> {
    this.refuseWhileLimited(user, address);
    const hash = user.passwordHash ?? (await decoyHash());
    if (!(await verifyPassword(password.slice(0, maxPasswordLength), hash))) {
      this.deps.limiter.recordFailure(user.username, address);
      this.deps.audit.warn({ event, username: user.username, address }, 'wrong password');
      throw new CredentialsRefusedError('password', 'Wrong password.');
    }
  }

  // `tagd users unlock` writes a new mark into users.json, which this process follows; the
  // failures themselves live only in this process's limiter.
  private applyUnlock(user: UserRecord): void {
    const mark = user.signInUnlock;
    if (mark === undefined || this.appliedUnlocks.get(user.id) === mark) return;
    this.appliedUnlocks.set(user.id, mark);
    if (this.deps.limiter.clearAccount(user.username)) {
      this.deps.audit.info(
        { event: 'sign-in-failures-cleared', username: user.username },
        'failed sign-ins cleared by tagd users unlock',
      );
    }
  }

  // Entries live as long as their preauth token; abandoned sign-ins must not pile up.
  private forgetExpiredTwoFactorFailures(): void {
    const now = this.deps.now();
    for (const [jti, entry] of this.twoFactorFailures) {
      if (entry.expiresAt <= now) this.twoFactorFailures.delete(jti);
    }
  }

  private permissionsOf(user: UserRecord): ReadonlySet<Permission> {
    const cached = this.permissionCache.get(user);
    // The roles array is replaced, never edited in place, when roles change.
    if (cached?.roles === user.roles) return cached.permissions;
    const permissions = new Set(permissionsOf(user.roles));
    this.permissionCache.set(user, { roles: user.roles, permissions });
    return permissions;
  }

  private identity(user: UserRecord): Pick<SignInResponse, 'username' | 'id' | 'permissions'> {
    return { username: user.username, id: user.id, permissions: permissionsOf(user.roles) };
  }
}

// The sign-in of an access or refresh token; verify() guarantees both claims for those types.
function signInOf(claims: TokenClaims): SignInClaims {
  if (claims.fam === undefined || claims.auth_time === undefined) {
    throw new UnauthorizedError('This token belongs to no sign-in.');
  }
  return { fam: claims.fam, authTime: claims.auth_time };
}

/** Why a new password is refused, as field errors; empty when it is acceptable. */
export function passwordProblems(password: string, current?: string) {
  const problems: { path: string; message: string }[] = [];
  if (password.length < minPasswordLength) {
    problems.push({
      path: 'newPassword',
      message: `Must be at least ${minPasswordLength} characters.`,
    });
  }
  if (password.length > maxPasswordLength) {
    problems.push({
      path: 'newPassword',
      message: `Must be at most ${maxPasswordLength} characters.`,
    });
  }
  if (current !== undefined && password === current) {
    problems.push({ path: 'newPassword', message: 'Must differ from the current password.' });
  }
  return problems;
}
