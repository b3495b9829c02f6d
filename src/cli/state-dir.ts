/**
 * The state directory as the offline commands (`tagd users …`, `tagd tokens …`) see it: the
 * same folder the daemon uses, opened directly, whether or not the daemon runs. The daemon
 * watches users.json and applies what these commands write at once. Also the way these
 * commands end: exit 0 on success, 1 on a failure, 2 on a usage error (with the usage).
 */
import { stat } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { type Logger, pino } from 'pino';
import { AccountService } from '../auth/account-service.js';
import { SignInLimiter } from '../auth/sign-in-limiter.js';
import { TokenService } from '../auth/token-service.js';
import { UserManagement } from '../auth/user-management.js';
import { UserStore } from '../auth/user-store.js';
import { TagdError, ValidationError } from '../errors.js';
import { createLogger } from '../logger.js';
import { SecretBox } from '../profile/secret-box.js';

/** The state directory: `TAGD_STATE_DIR`, default `./var`, as an absolute path. */
export function resolveStateDir(): string {
  return resolve(process.env.TAGD_STATE_DIR ?? 'var');
}

/** A wrong command line: reported with the subcommand's usage and exit code 2. */
export class CommandUsageError extends Error {
  /** @param message the line printed after `tagd: `, above the usage. */
  constructor(message: string) {
    super(message);
    this.name = 'CommandUsageError';
  }
}

/** A failure the command reports on stderr with exit code 1 (usage errors are exit 2). */
export class CommandFailure extends Error {
  /**
   * @param message the line printed after `tagd: `.
   * @param details further lines, printed indented.
   */
  constructor(
    message: string,
    readonly details: readonly string[] = [],
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}

/**
 * Runs a command body and turns how it ended into stderr lines and `process.exitCode`:
 * {@link CommandUsageError} and parseArgs errors → 2 with `usage`; {@link CommandFailure} and
 * TagdError (unknown account, name taken, …) → 1; anything else propagates.
 */
export async function runCommand(usage: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof CommandUsageError || isParseArgsError(error)) {
      process.stderr.write(`tagd: ${(error as Error).message}\n\n${usage}`);
      process.exitCode = 2;
      return;
    }
    if (error instanceof CommandFailure || error instanceof TagdError) {
      process.stderr.write(`tagd: ${error.message}\n`);
      const details =
        error instanceof CommandFailure
          ? error.details
          : error instanceof ValidationError
            ? error.errors.map((problem) => `${problem.path}: ${problem.message}`)
            : [];
      for (const line of details) process.stderr.write(`  ${line}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}

/** True for the errors node:util parseArgs throws on a wrong command line (unknown option…). */
export function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/**
 * The audit log of a command: JSON lines on stderr, so stdout carries only what the command
 * prints (a token or password to capture with `$(…)`). Every line names the OS account that
 * ran the command, because the CLI has no signed-in user to attribute changes to.
 */
export function cliAuditLogger(): Logger {
  return createLogger({
    pretty: false,
    destination: pino.destination({ fd: 2, sync: true }),
  }).child({ component: 'audit', via: 'cli', operator: operatorName() });
}

function operatorName(): string {
  try {
    return userInfo().username;
  } catch {
    // A uid without a passwd entry (containers) has no name.
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}

/**
 * Checks the state directory before a command touches it. A missing one is created only when
 * `create` is set (`tagd users add` before the first start); for every other command it means
 * TAGD_STATE_DIR points elsewhere than the daemon's, which "no account named …" would hide.
 * One owned by another user is refused: files the CLI writes are replaced (write + rename), so
 * they would end up owned by the caller with mode 0600, and a `sudo tagd users …` as root would
 * leave a users.json the daemon's `tagd` user cannot read.
 * @throws CommandFailure saying which directory and what to do.
 */
export async function checkStateDir(stateDir: string, create: boolean): Promise<void> {
  const owner = await stat(stateDir).then(
    (stats) => stats.uid,
    () => undefined,
  );
  if (owner === undefined) {
    if (create) return;
    throw new CommandFailure(`No state directory at ${stateDir}.`, [
      "Set TAGD_STATE_DIR to the daemon's state directory, e.g. TAGD_STATE_DIR=/var/lib/tagd.",
    ]);
  }
  const uid = process.geteuid?.();
  if (uid === undefined || owner === uid) return;
  throw new CommandFailure(
    `The state directory ${stateDir} belongs to uid ${owner}, not to you (uid ${uid}).`,
    [
      'Run the command as its owner so the daemon can still read what it writes, e.g.:',
      `sudo -u tagd TAGD_STATE_DIR=${stateDir} tagd users list`,
    ],
  );
}

/** What the account commands work with; `close()` when done. */
export interface AccountTools {
  stateDir: string;
  users: UserStore;
  audit: Logger;
  /** Opens the sealing key (created on first use), as the daemon does. */
  secretBox(): Promise<SecretBox>;
  /** Builds the account service (opens the JWT key, created on first use). */
  accounts(): Promise<AccountService>;
  /**
   * Account administration, the same service the API's Users routes use (keys are opened only
   * when a change needs them: a token, a two-factor secret).
   */
  management: UserManagement;
  close(): Promise<void>;
}

/** Options of {@link openAccountTools}. */
export interface OpenAccountToolsOptions {
  /** Default: {@link resolveStateDir}. */
  stateDir?: string;
  /** Create the state directory (0700) when missing, instead of failing. Default false. */
  create?: boolean;
  /** Default: {@link cliAuditLogger}. */
  audit?: Logger;
}

/**
 * Opens the accounts database of the state directory. Keys are opened only by the commands that
 * need them, so `tagd users list` creates no key file.
 * @throws CommandFailure when the directory is missing (without `create`) or not the caller's.
 */
export async function openAccountTools(
  options: OpenAccountToolsOptions = {},
): Promise<AccountTools> {
  const stateDir = options.stateDir ?? resolveStateDir();
  const audit = options.audit ?? cliAuditLogger();
  await checkStateDir(stateDir, options.create ?? false);
  const users = new UserStore({ stateDir });
  await users.start();
  // The daemon takes the sealing key from a systemd credential when it has one; so must we,
  // or a TOTP secret sealed here would not open there.
  const credentialsDir = process.env.CREDENTIALS_DIRECTORY;
  let box: Promise<SecretBox> | undefined;
  const secretBox = () => {
    box ??= SecretBox.open(stateDir, credentialsDir);
    return box;
  };
  return {
    stateDir,
    users,
    audit,
    secretBox,
    management: new UserManagement({
      users,
      // Lifetimes do not matter: the CLI issues only service tokens, which do not expire.
      tokens: () => TokenService.open(stateDir),
      audit,
      secretBox,
    }),
    async accounts() {
      return new AccountService({
        users,
        // Lifetimes do not matter: the CLI issues only service tokens, which do not expire.
        tokens: await TokenService.open(stateDir),
        limiter: new SignInLimiter(Date.now),
        secretBox: await secretBox(),
        audit,
        now: Date.now,
      });
    },
    close: () => users.stop(),
  };
}
