/**
 * End to end with the demo profile: its derived tags (a scaling, a status bit, a five-minute
 * average, a totalizer) over the simulator, as a client sees them: on the API (samples and
 * DerivedTags), in the SQLite history, and in a webhook batch; the totalizer's total in the
 * state directory after a stop, and back after a restart.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

type Json = Record<string, unknown>;

async function call(url: string, token: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, json: (await response.json()) as Json };
}

/** The demo's scaling, and its deadband: a smaller move of the flow is not written. */
const scale = (raw: number) => (raw * 50) / 27648;
const deadband = 0.01;

test('the demo’s derived tags: on the API, in history, in a webhook batch, and the total kept', async (t) => {
  const receiver = await startReceiver(t);
  const stateDir = join(await tempDir(t), 'state');
  const start = Date.UTC(2026, 0, 1, 8);
  const clock = new ManualClock(start);
  const demo = await demoDaemon(t, {
    stateDir,
    clock,
    profile: (profile: Json) => {
      const publishers = profile.publishers as { webhooks: Json[] };
      (publishers.webhooks[0] as Json).destinationUrl = receiver.url;
    },
  });
  const { daemon, url } = demo;
  const store = daemon.store;
  if (!store) return t.fail('no store');
  const token = await adminToken(url, stateDir);

  // In the same write as the simulator's scan: the scaled flow matches the raw count now.
  for (let second = 0; second < 10; second++) {
    clock.advance(1000);
    const raw = store.require('Demo/Line1/FlowRaw').value as number;
    const scaled = store.require('Derived/Line1/Flow').value as number;
    t.true(Math.abs(scaled - scale(raw)) < deadband, `${scaled} for ${raw}`);
    const word = store.require('Demo/Line1/StatusWord').value as number;
    t.is(store.require('Derived/Line1/GuardClosed').value, (word & 8) === 8);
  }

  const flow = await call(url, token, '/api/v2/Tags/Sample/Derived/Line1/Flow');
  t.like(flow.json, { quality: 'Good', metadata: { unit: 'm³/h' } });
  const listed = await call(url, token, '/api/v2/DerivedTags');
  t.deepEqual(
    (listed.json.derivedTags as Json[]).map((tag) => [
      tag.fullTagId,
      (tag.lastEvaluation as Json)?.quality,
    ]),
    [
      ['Derived/Line1/Flow', 'Good'],
      ['Derived/Line1/GuardClosed', 'Good'],
      ['Derived/Line1/FlowAvg5m', 'Good'],
      ['Derived/Line1/FlowTotal', 'Good'],
    ],
  );
  // The totalizer grew by each second's flow: a positive total below 10 s at 50 m³/h.
  const total = store.require('Derived/Line1/FlowTotal').value as number;
  t.true(total > 0 && total < (50 * 10) / 3600, `${total} m³`);

  // The demo publisher's Snapshot batch (every 10 s) carries the derived tags with the line's.
  const [batch] = await receiver.waitForRequests(1);
  const entries = batch?.json as { fullTagId: string; value: number; quality: string }[];
  const derived = entries.filter((entry) => entry.fullTagId.startsWith('Derived/'));
  t.deepEqual(
    derived.map((entry) => [entry.fullTagId, entry.quality]),
    [
      ['Derived/Line1/Flow', 'Good'],
      ['Derived/Line1/FlowAvg5m', 'Good'],
      ['Derived/Line1/FlowTotal', 'Good'],
    ],
  );
  const rawEntry = entries.find((entry) => entry.fullTagId === 'Demo/Line1/FlowRaw');
  t.true(Math.abs((derived[0]?.value as number) - scale(rawEntry?.value as number)) < deadband);

  // A stop writes the history buffer and the totals; the history holds the derived flow.
  await daemon.stop();
  const saved = JSON.parse(await readFile(join(stateDir, 'derived', 'Derived.json'), 'utf8'));
  t.is(saved.totals['Line1/FlowTotal']['integrate#0'], total);

  const again = await demoDaemon(t, { stateDir, clock });
  const signIn = await fetch(`${again.url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'a long new admin password' }),
  });
  const second = ((await signIn.json()) as Json).token as string;
  const logged = await call(again.url, second, '/api/v2/TagQuerySet', {
    bindings: [
      {
        source: 'Derived/Line1/Flow',
        store: 'Logged',
        timeRangeStart: new Date(start).toISOString(),
        timeRangeStop: new Date(start + 10_000).toISOString(),
      },
    ],
  });
  t.is(logged.status, 200, JSON.stringify(logged.json));
  const values = (logged.json.values as { quality: string; value?: number }[]).filter(
    (value) => value.quality === 'Good',
  );
  t.true(values.length >= 5, `${values.length} derived samples logged`);
  // The totalizer starts again from its saved total.
  const restored = again.daemon.store?.require('Derived/Line1/FlowTotal').value as number;
  t.true(restored >= total, `${restored} ≥ ${total}`);
});
