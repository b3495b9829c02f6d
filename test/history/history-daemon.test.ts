import { existsSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { adminToken, demoDaemon } from '../helpers/demo-daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const newAdminPassword = 'a long new admin password';

async function postJson(url: string, body: unknown, token?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

test('the demo profile logs to sqlite in the state directory, and a restart keeps the history', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 8));
  const first = await demoDaemon(t, { stateDir, clock });
  t.truthy(first.daemon.history, 'the demo profile enables history');
  t.true(existsSync(join(stateDir, 'history.db')));
  const token = await adminToken(first.url, stateDir);
  // A minute of the simulator: the counter moves every second, the Line1 collection logs it.
  for (let i = 0; i < 60; i++) clock.advance(1000);
  const partsBefore = first.daemon.store?.require('Demo/Line1/PartsCount').value;
  await first.daemon.stop();
  const order = first.logs.lines.map((line) => line.msg);
  t.true(order.indexOf('sqlite history opened') < order.indexOf('simulator started'));
  t.true(order.indexOf('simulator stopped') < order.indexOf('history stopped'));
  t.is(first.logs.lines.find((line) => line.msg === 'history stopped')?.buffered, 0);

  const second = await demoDaemon(t, { stateDir, clock });
  const signIn = await postJson(`${second.url}/api/v2/Users/Authenticate`, {
    username: 'admin',
    password: newAdminPassword,
  });
  t.is(signIn.status, 200, JSON.stringify(signIn.json));
  t.truthy(token);
  const query = await postJson(
    `${second.url}/api/v2/TagQuerySet`,
    {
      bindings: [
        {
          source: 'Demo/Line1/PartsCount',
          store: 'Logged',
          timeRangeStart: '2026-01-01T08:00:00Z',
          timeRangeStop: '2026-01-01T08:01:00Z',
        },
        {
          source: 'Demo/Line1/PartsCount',
          store: 'Logged',
          timeRangeStart: '2026-01-01T08:00:00Z',
          timeRangeStop: '2026-01-01T08:01:00Z',
          seriesMode: 'Aggregated',
          aggregationWindow: '1m',
          aggregationFunction: 'Max',
        },
      ],
    },
    signIn.json.token as string,
  );
  t.is(query.status, 200, JSON.stringify(query.json));
  const values = query.json.values as { binding: number; value?: unknown; quality: string }[];
  const raw = values.filter((v) => v.binding === 0 && v.quality === 'Good');
  t.true(raw.length >= 55, `${raw.length} counter samples logged in the first run`);
  t.is(raw.at(-1)?.value, partsBefore, 'the last one was stored on stop');
  // Inclusive stop: 08:01:00 opens a second window holding the last sample alone.
  t.deepEqual(
    values.filter((v) => v.binding === 1).map((v) => v.value),
    [(partsBefore as number) - 1, partsBefore],
  );
});

test('a history file that cannot be opened stops start-up, with nothing left running', async (t) => {
  const { daemon } = await demoDaemon(t, {
    start: false,
    profile: (demo: Record<string, unknown>) => {
      demo.history = { backend: 'sqlite', file: '/nonexistent-tagd-dir/history.db' };
    },
  });
  await t.throwsAsync(() => daemon.start(), {
    message:
      'Cannot open the history database /nonexistent-tagd-dir/history.db: Cannot open database because the directory does not exist',
  });
  t.is(daemon.url(), undefined);
  t.false(daemon.store?.has('Demo/Line1/Temperature'), 'no driver was started');
});
