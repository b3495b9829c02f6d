import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { UserRecord } from '../../src/auth/user-store.js';
import { runTagdCli, seededStateDir } from '../helpers/cli-state.js';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { tempDir } from '../helpers/temp-dir.js';

const sample = '/api/v2/Tags/Sample/Demo/Line1/Temperature';
const jwtPattern = /^[\w-]+\.[\w-]+\.[\w-]+$/;

const tagd = (stateDir: string, args: string[]) => runTagdCli(stateDir, args);
const seeded = (t: ExecutionContext, accounts: Parameters<typeof seededStateDir>[1]) =>
  seededStateDir(t, accounts, 'a long password');

async function tokenVersion(stateDir: string, username: string): Promise<number | undefined> {
  const { users } = JSON.parse(await readFile(join(stateDir, 'users.json'), 'utf8')) as {
    users: UserRecord[];
  };
  return users.find((user) => user.username === username)?.tokenVersion;
}

/** The demo profile served on an ephemeral loopback port, on the given state directory. */
async function servedOn(t: ExecutionContext, stateDir: string): Promise<string> {
  return (await demoDaemon(t, { stateDir })).url;
}

function read(url: string, token: string): Promise<Response> {
  return fetch(`${url}${sample}`, { headers: { Authorization: `Bearer ${token}` } });
}

test('generate prints only the token, which reads tags through the API', async (t) => {
  const stateDir = await seeded(t, [{ username: 'scada', kind: 'service', roles: ['Viewers'] }]);
  const run = await tagd(stateDir, ['tokens', 'generate', 'scada']);
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/, 'stdout is the token alone');
  const token = run.stdout.trim();
  t.is(run.audit.length, 1);
  t.like(run.audit[0], {
    component: 'audit',
    via: 'cli',
    event: 'service-token-generated',
    username: 'scada',
  });
  t.false(run.stderr.includes(token), 'the token is never logged');
  t.regex(run.stderr, /shown only this once/);
  t.is(await tokenVersion(stateDir, 'scada'), 2);

  const url = await servedOn(t, stateDir);
  const response = await read(url, token);
  t.is(response.status, 200);
  const body = (await response.json()) as { fullTagId?: string; quality?: string };
  t.is(body.fullTagId, 'Demo/Line1/Temperature');
  t.is(body.quality, 'Good');
});

test('generating again voids the previous token', async (t) => {
  const stateDir = await seeded(t, [{ username: 'scada', kind: 'service', roles: ['Operators'] }]);
  const first = await tagd(stateDir, ['tokens', 'generate', 'scada']);
  const second = await tagd(stateDir, ['tokens', 'generate', 'scada']);
  t.is(first.code, 0);
  t.is(second.code, 0);
  const [old, current] = [first.stdout.trim(), second.stdout.trim()];
  t.regex(current, jwtPattern);
  t.not(old, current);
  t.is(await tokenVersion(stateDir, 'scada'), 3);
  const url = await servedOn(t, stateDir);
  t.is((await read(url, old)).status, 401);
  t.is((await read(url, current)).status, 200);
});

test('generate for a user account exits 1 with a clear message and changes nothing', async (t) => {
  const stateDir = await seeded(t, [{ username: 'alice', kind: 'user', roles: ['Viewers'] }]);
  const run = await tagd(stateDir, ['tokens', 'generate', 'alice']);
  t.is(run.code, 1);
  t.is(run.stdout, '');
  t.is(
    run.stderr,
    [
      "tagd: 'alice' is not a service account; only service accounts have generated tokens.",
      '  A user signs in with its password (POST /api/v2/Users/Authenticate).',
      '  Create a service account with: tagd users add NAME --service --roles Viewers',
      '',
    ].join('\n'),
  );
  t.is(await tokenVersion(stateDir, 'alice'), 1);
});

test('generate for an unknown account exits 1', async (t) => {
  const stateDir = await seeded(t, [{ username: 'alice', kind: 'user', roles: ['Viewers'] }]);
  const run = await tagd(stateDir, ['tokens', 'generate', 'ghost']);
  t.is(run.code, 1);
  t.is(run.stderr, "tagd: No account named 'ghost'.\n");
  t.is(run.stdout, '');
});

test('a disabled service account gets a token with a note that it works once enabled', async (t) => {
  const stateDir = await seeded(t, [
    { username: 'scada', kind: 'service', roles: ['Viewers'], disabled: true },
  ]);
  const run = await tagd(stateDir, ['tokens', 'generate', 'scada']);
  t.is(run.code, 0);
  t.regex(run.stdout.trim(), jwtPattern);
  t.regex(run.stderr, /Note: 'scada' is disabled; the token works once it is enabled\./);
});

test('usage errors exit 2 with the tokens usage; help prints it', async (t) => {
  const stateDir = await tempDir(t);
  for (const args of [
    ['tokens', 'generate'],
    ['tokens', 'generate', 'a', 'b'],
    ['tokens', 'generate', 'a', '--forever'],
    ['tokens', 'revoke', 'a'],
  ]) {
    const run = await tagd(stateDir, args);
    t.is(run.code, 2, args.join(' '));
    t.regex(run.stderr, /^tagd: .+\n\nUsage:\n {2}tagd tokens generate NAME/, args.join(' '));
    t.is(run.stdout, '');
  }
  const help = await tagd(stateDir, ['tokens', '--help']);
  t.is(help.code, 0);
  t.true(help.stdout.startsWith('Usage:\n  tagd tokens generate NAME'));
});
