/**
 * `tagd users …` and `tagd tokens …` run as real processes against the state directory of a
 * running daemon: the daemon follows users.json, so a revoked token gets 401 within moments.
 */

import test, { type ExecutionContext } from 'ava';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { startTagd } from '../helpers/tagd-process.js';
import { untilTimeoutMs } from '../helpers/until.js';

const sample = '/api/v2/Tags/Sample/Demo/Line1/Temperature';
const password = 'correct horse battery';
/**
 * How long a probe waits for the daemon to apply a change made by the CLI, ms: a safety net, not
 * a timing rule. The daemon follows users.json by a file watch (no polling to outrun), so a change
 * it misses never shows; a fixed 2 s was overrun by 1.7 s pick-ups on a loaded 2-core machine.
 */
const promptlyMs = untilTimeoutMs;

interface Running {
  url: string;
  stateDir: string;
}

async function runningDaemon(t: ExecutionContext): Promise<Running> {
  // The first start creates 'admin', so the accounts added below are not the first.
  const { url, stateDir } = await demoDaemon(t);
  return { url, stateDir };
}

/** Runs `tagd ARGS…` on the daemon's state directory; fails the test on a non-zero exit. */
async function tagd(
  t: ExecutionContext,
  { stateDir }: Running,
  args: string[],
  input?: string,
): Promise<string> {
  const run = startTagd(args, {
    env: { TAGD_STATE_DIR: stateDir },
    ...(input === undefined ? {} : { input }),
  });
  const code = await run.exited;
  t.is(code, 0, `tagd ${args.join(' ')}: ${run.stderr()}`);
  return run.stdout().trim();
}

function read(daemon: Running, token: string): Promise<number> {
  return fetch(`${daemon.url}${sample}`, { headers: { Authorization: `Bearer ${token}` } }).then(
    (response) => response.status,
  );
}

/** Polls until `probe` answers `expected`; returns the last answer after {@link promptlyMs}. */
async function eventually<T>(probe: () => Promise<T>, expected: T): Promise<T> {
  const deadline = Date.now() + promptlyMs;
  for (;;) {
    const answer = await probe();
    if (answer === expected || Date.now() > deadline) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function signIn(daemon: Running, username: string) {
  const response = await fetch(`${daemon.url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { token?: string; refreshToken?: string },
  };
}

test('users disable: the access and refresh tokens of a signed-in user die at once', async (t) => {
  const daemon = await runningDaemon(t);
  await tagd(t, daemon, ['users', 'add', 'alice', '--roles', 'Operators'], `${password}\n`);
  // The daemon picks the new account up from users.json; until then sign-in says 401.
  const signedIn = await eventually(async () => (await signIn(daemon, 'alice')).status, 200);
  t.is(signedIn, 200);
  const { body } = await signIn(daemon, 'alice');
  const access = body.token as string;
  const refresh = body.refreshToken as string;
  t.is(await read(daemon, access), 200);

  await tagd(t, daemon, ['users', 'disable', 'alice']);
  t.is(await eventually(() => read(daemon, access), 401), 401);
  const renewed = await fetch(`${daemon.url}/api/v2/Users/Refresh`, {
    headers: { Authorization: `Bearer ${refresh}` },
  });
  t.is(renewed.status, 401, 'the refresh token died with the account');
  t.is((await signIn(daemon, 'alice')).status, 401, 'and the password no longer signs in');

  await tagd(t, daemon, ['users', 'enable', 'alice']);
  t.is(await eventually(async () => (await signIn(daemon, 'alice')).status, 200), 200);
  t.is(await read(daemon, access), 401, 'enabling does not revive the old token');
});

test('users roles: a service token dies when its roles change (spec §3.2)', async (t) => {
  const daemon = await runningDaemon(t);
  await tagd(t, daemon, ['users', 'add', 'scada', '--service', '--roles', 'Operators']);
  const token = await tagd(t, daemon, ['tokens', 'generate', 'scada']);
  t.is(await eventually(() => read(daemon, token), 200), 200);

  await tagd(t, daemon, ['users', 'roles', 'scada', 'Viewers']);
  t.is(await eventually(() => read(daemon, token), 401), 401);

  const next = await tagd(t, daemon, ['tokens', 'generate', 'scada']);
  t.is(await eventually(() => read(daemon, next), 200), 200, 'a new token has the new roles');
});

test('tokens generate: the previous service token dies, the new one works', async (t) => {
  const daemon = await runningDaemon(t);
  await tagd(t, daemon, ['users', 'add', 'scada', '--service']);
  const first = await tagd(t, daemon, ['tokens', 'generate', 'scada']);
  t.is(await eventually(() => read(daemon, first), 200), 200);

  const second = await tagd(t, daemon, ['tokens', 'generate', 'scada']);
  t.is(await eventually(() => read(daemon, first), 401), 401);
  t.is(await eventually(() => read(daemon, second), 200), 200);
});

test('users disable: a service token dies at once too', async (t) => {
  const daemon = await runningDaemon(t);
  await tagd(t, daemon, ['users', 'add', 'scada', '--service']);
  const token = await tagd(t, daemon, ['tokens', 'generate', 'scada']);
  t.is(await eventually(() => read(daemon, token), 200), 200);
  await tagd(t, daemon, ['users', 'disable', 'scada']);
  t.is(await eventually(() => read(daemon, token), 401), 401);
});

test('users unlock: a locked-out account signs in again on the running daemon', async (t) => {
  const daemon = await runningDaemon(t);
  await tagd(t, daemon, ['users', 'add', 'alice', '--roles', 'Viewers'], `${password}\n`);
  t.is(await eventually(async () => (await signIn(daemon, 'alice')).status, 200), 200);
  const wrong = () =>
    fetch(`${daemon.url}/api/v2/Users/Authenticate`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: 'not the password' }),
    }).then((response) => response.status);
  for (let i = 0; i < 5; i++) t.is(await wrong(), 401);
  t.is((await signIn(daemon, 'alice')).status, 429, 'locked out, even with the password');

  await tagd(t, daemon, ['users', 'unlock', 'alice']);
  // The daemon's clock does not move in this test: only the unlock can lift the lockout.
  t.is(await eventually(async () => (await signIn(daemon, 'alice')).status, 200), 200);
});
