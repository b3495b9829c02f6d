/**
 * The `tagd` command on a state directory, as the CLI tests run it: accounts written
 * in-process (faster than the CLI), then the real command in a child process.
 */
import type { ExecutionContext } from 'ava';
import { hashPassword } from '../../src/auth/password.js';
import { type UserRecord, UserStore } from '../../src/auth/user-store.js';
import { startTagd } from './tagd-process.js';
import { tempDir } from './temp-dir.js';

/** What a finished `tagd` command left. */
export interface CliRun {
  code: number | string;
  stdout: string;
  stderr: string;
  /** The JSON audit lines of stderr. */
  audit: Record<string, unknown>[];
}

/** Runs `tagd ARGS…` on a state directory; `input` is piped to stdin (else /dev/null). */
export async function runTagdCli(
  stateDir: string,
  args: string[],
  input?: string,
): Promise<CliRun> {
  const run = startTagd(args, {
    env: { TAGD_STATE_DIR: stateDir },
    ...(input === undefined ? {} : { input }),
  });
  const code = await run.exited;
  const stderr = run.stderr();
  const audit = stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code, stdout: run.stdout(), stderr, audit };
}

/**
 * A temporary state directory holding these accounts; people (`kind: 'user'`) get `password`
 * unless the entry brings its own hash.
 */
export async function seededStateDir(
  t: ExecutionContext,
  accounts: (Pick<UserRecord, 'username' | 'kind' | 'roles'> & Partial<UserRecord>)[],
  password: string,
): Promise<string> {
  const stateDir = await tempDir(t);
  const users = new UserStore({ stateDir });
  await users.start();
  for (const fields of accounts) {
    await users.add({
      ...(fields.kind === 'user' ? { passwordHash: await hashPassword(password) } : {}),
      ...fields,
    });
  }
  return stateDir;
}
