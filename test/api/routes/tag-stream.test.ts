import test, { type ExecutionContext } from 'ava';
import { createApp } from '../../../src/api/app.js';
import { HttpListener } from '../../../src/api/http-listener.js';
import { TagStreamHub, type TagStreamLimits } from '../../../src/api/tag-stream/tag-stream-hub.js';
import { systemClock } from '../../../src/clock.js';
import type { Sample } from '../../../src/tags/sample.js';
import { type ApiHarness, startApi } from '../../helpers/api-harness.js';
import { openSse, type SseBlock } from '../../helpers/sse-client.js';

const streamPath = '/api/v2/Tags/Stream';

function good(fullTagId: string, value: number | string, at = '2026-01-01T00:00:00.000Z'): Sample {
  return { fullTagId, utcTimestamp: at, quality: 'Good', value };
}

/** The API with a stream hub on the harness's manual clock (heartbeats, expiry) and `limits`. */
async function streamApi(
  t: ExecutionContext,
  limits: Partial<TagStreamLimits> = {},
  realTime = false,
): Promise<ApiHarness & { hub: TagStreamHub }> {
  let hub: TagStreamHub | undefined;
  const api = await startApi(t, {
    deps: (base) => {
      hub = new TagStreamHub({
        store: base.store,
        accounts: base.accounts,
        clock: realTime ? systemClock : base.clock,
        limits,
      });
      return { streams: hub };
    },
  });
  t.teardown(() => hub?.closeAll());
  return Object.assign(api, { hub: hub as TagStreamHub });
}

function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}

const dataBlocks = (blocks: SseBlock[]) => blocks.filter((block) => block.data !== undefined);

/** Resolves once `condition` holds, checking after each turn of the event loop. */
async function eventually(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

test('first the matching samples ordered by path, then one event per batch, in order', async (t) => {
  const api = await streamApi(t);
  api.store.write([good('Line1/B', 1), good('Line2/X', 5), good('Line1/A', 2)]);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const stream = await openSse(`${api.baseUrl}${streamPath}?pattern=Line1/*`, bearer(token));
  t.is(stream.status, 200);
  t.is(stream.headers['content-type'], 'text/event-stream; charset=utf-8');
  t.is(stream.headers['cache-control'], 'no-store');
  t.is(stream.headers['x-accel-buffering'], 'no');
  await stream.until((blocks) => dataBlocks(blocks).length === 1, 'first event');
  t.deepEqual(stream.events()[0], [good('Line1/A', 2), good('Line1/B', 1)]);

  api.store.write([good('Line1/A', 3), good('Line2/X', 6)]);
  api.store.write([good('Line2/X', 7)]); // matches nothing: no event
  api.store.write([good('Line1/B', 4), good('Line1/A', 5), good('Line1/C', 6)]);
  await stream.until((blocks) => dataBlocks(blocks).length === 3, 'two batch events');
  const events = stream.events();
  t.deepEqual(events[1], [good('Line1/A', 3)]);
  t.deepEqual(events[2], [good('Line1/B', 4), good('Line1/A', 5), good('Line1/C', 6)]);
  stream.close();
  await eventually(() => api.hub.size === 0);
});

test('each event is a JSON array in the exact Tags/Sample shape', async (t) => {
  const api = await streamApi(t);
  const sample: Sample = {
    fullTagId: 'Boiler/Temperature',
    utcTimestamp: '2026-01-01T00:00:01.000Z',
    quality: 'Stale',
    value: 61.5,
    reason: 'NoUpdate',
    message: 'No update for 3000 ms.',
    metadata: { unit: '°C', source: 'modbus:10.0.0.5:502/1/IR2' },
  };
  api.store.write([sample]);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const read = await api.request('/api/v2/Tags/Sample/Boiler/Temperature', { token });
  const stream = await openSse(`${api.baseUrl}${streamPath}`, bearer(token));
  await stream.until((blocks) => dataBlocks(blocks).length === 1);
  t.deepEqual(stream.events()[0], [read.json]);
  stream.close();
});

test('a browser cookie session opens the stream; no token at all is 401', async (t) => {
  const api = await streamApi(t);
  await api.addUser('olga', ['Viewers']);
  const signIn = await fetch(`${api.baseUrl}/api/v2/Users/Authenticate?useCookies=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'olga', password: 'correct horse battery' }),
  });
  t.is(signIn.status, 200);
  const cookies = signIn.headers
    .getSetCookie()
    .map((line) => line.split(';')[0])
    .filter((pair) => !pair?.endsWith('='))
    .join('; ');
  const stream = await openSse(`${api.baseUrl}${streamPath}`, { Cookie: cookies });
  t.is(stream.status, 200);
  await stream.until((blocks) => dataBlocks(blocks).length === 1);
  stream.close();

  const anonymous = await openSse(`${api.baseUrl}${streamPath}`);
  t.is(anonymous.status, 401);
  t.is(JSON.parse(anonymous.body).code, 'unauthorized');
});

test('an invalid pattern is a 400 naming the field', async (t) => {
  const api = await streamApi(t);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const response = await api.request(`${streamPath}?pattern=${encodeURIComponent('a//b')}`, {
    token,
  });
  t.is(response.status, 400);
  t.is(response.json.code, 'validation-failed');
  t.is((response.json.errors as { path: string }[])[0]?.path, 'pattern');
  t.is(api.hub.size, 0);
});

test('a slow client gets coalesced latest values, never a backlog', async (t) => {
  const api = await streamApi(t);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const ids = Array.from({ length: 20 }, (_, i) => `Big/T${String(i).padStart(2, '0')}`);
  // 64 KiB strings: a few batches fill the loopback socket buffers.
  const batch = (round: number) =>
    ids.map((id) => good(id, `${String(round).padStart(6, '0')}${'x'.repeat(65_536)}`));
  api.store.write(batch(0));
  const stream = await openSse(`${api.baseUrl}${streamPath}?pattern=Big/**`, bearer(token));
  await stream.until((blocks) => dataBlocks(blocks).length === 1);
  stream.pause();

  let round = 0;
  // Written until the server sees the socket backpressured, yielding so bytes can move.
  while (api.hub.backlogged() === 0) {
    round += 1;
    api.store.write(batch(round));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const firstCoalesced = round + 1;
  const extra = 50;
  for (let i = 0; i < extra; i++) {
    round += 1;
    api.store.write(batch(round));
  }
  // Half the tags change once more: they must arrive with this last value, after the others.
  round += 1;
  api.store.write(batch(round).slice(0, 10));
  const last = round;

  stream.resume();
  const roundOf = (sample: unknown) => Number(String((sample as Sample).value).slice(0, 6));
  await stream.until((blocks) => {
    const events = dataBlocks(blocks);
    const final = events[events.length - 1];
    return (
      final !== undefined &&
      (JSON.parse(final.data as string) as Sample[]).some((s) => roundOf(s) === last)
    );
  }, 'the last round');
  const events = stream.events();
  t.true(
    events.length < 1 + round,
    `fewer events (${events.length}) than batches written (${round + 1})`,
  );
  // Every tag's values only go forward, and each tag appears once per event after coalescing.
  const seen = new Map<string, number>();
  for (const event of events) {
    const inEvent = new Set<string>();
    for (const sample of event as Sample[]) {
      const value = roundOf(sample);
      t.true(value >= (seen.get(sample.fullTagId) ?? -1), `${sample.fullTagId} went back`);
      seen.set(sample.fullTagId, value);
      if (roundOf(sample) >= firstCoalesced) {
        t.false(inEvent.has(sample.fullTagId), 'a coalesced event holds a tag once');
      }
      inEvent.add(sample.fullTagId);
    }
  }
  // Everyone ends on the latest value written.
  for (const [index, id] of ids.entries()) t.is(seen.get(id), index < 10 ? last : last - 1, id);
  t.is(api.hub.backlogged(), 0);
  stream.close();
});

test('a client that stops reading for the stall timeout is disconnected, freeing its slot', async (t) => {
  const api = await streamApi(t, { stallTimeoutMs: 60_000, heartbeatMs: 15_000 });
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const stream = await openSse(`${api.baseUrl}${streamPath}`, bearer(token));
  await stream.until((blocks) => dataBlocks(blocks).length === 1);
  stream.pause();
  let round = 0;
  while (api.hub.backlogged() === 0) {
    round += 1;
    api.store.write([good('Big/T', `${round}${'x'.repeat(262_144)}`)]);
    await new Promise((resolve) => setImmediate(resolve));
  }
  api.clock.advance(45_000);
  t.is(api.hub.size, 1, 'still open before the stall timeout');
  api.clock.advance(30_000);
  t.is(api.hub.size, 0);
  // A paused socket does not read, so it notices the end only once it reads again.
  stream.resume();
  await stream.ended;
  t.pass();
});

test('heartbeat comments come every 15 s (injected clock)', async (t) => {
  const api = await streamApi(t);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const stream = await openSse(`${api.baseUrl}${streamPath}`, bearer(token));
  await stream.until((blocks) => blocks.length === 1);
  api.clock.advance(14_999);
  api.clock.advance(1);
  await stream.until((blocks) => blocks.length === 2, 'first heartbeat');
  t.deepEqual(stream.blocks[1], { comment: 'heartbeat' });
  api.clock.advance(15_000);
  await stream.until((blocks) => blocks.length === 3, 'second heartbeat');
  t.deepEqual(stream.blocks[2], { comment: 'heartbeat' });
  stream.close();
});

test('heartbeat comments arrive in real time too', async (t) => {
  const api = await streamApi(t, { heartbeatMs: 100 }, true);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const stream = await openSse(`${api.baseUrl}${streamPath}`, bearer(token));
  // No deadline of its own: ava's test timeout is the room.
  await stream.until(
    (blocks) => blocks.filter((block) => block.comment === 'heartbeat').length >= 2,
    'two heartbeats',
  );
  t.pass();
  stream.close();
});

test('SignOut ends the stream of that sign-in only', async (t) => {
  const api = await streamApi(t);
  await api.addUser('olga', ['Viewers']);
  const first = await api.signIn('olga');
  const second = await api.signIn('olga');
  const ending = await openSse(`${api.baseUrl}${streamPath}`, bearer(first));
  const staying = await openSse(`${api.baseUrl}${streamPath}`, bearer(second));
  await ending.until((blocks) => blocks.length === 1);
  await staying.until((blocks) => blocks.length === 1);
  const out = await api.request('/api/v2/Users/SignOut', { method: 'POST', token: first });
  t.is(out.status, 204);
  await ending.ended;
  api.store.write([good('A/B', 1)]);
  await staying.until((blocks) => dataBlocks(blocks).length === 2, 'the other sign-in goes on');
  t.is(api.hub.size, 1);
  staying.close();
});

test('disabling the account, a password change and token expiry end streams', async (t) => {
  const api = await streamApi(t);
  await api.addUser('olga', ['Viewers']);
  await api.addUser('root', ['Administrators']);
  const admin = await api.signIn('root');

  const disabled = await openSse(`${api.baseUrl}${streamPath}`, bearer(await api.signIn('olga')));
  await disabled.until((blocks) => blocks.length === 1);
  const put = await api.request('/api/v2/Users/olga', {
    method: 'PUT',
    token: admin,
    body: { enabled: false },
  });
  t.is(put.status, 200);
  await disabled.ended;
  await api.request('/api/v2/Users/olga', { method: 'PUT', token: admin, body: { enabled: true } });

  const token = await api.signIn('olga');
  const changed = await openSse(`${api.baseUrl}${streamPath}`, bearer(token));
  await changed.until((blocks) => blocks.length === 1);
  const change = await api.request('/api/v2/Users/Current/ChangePassword', {
    method: 'POST',
    token,
    body: { currentPassword: 'correct horse battery', newPassword: 'a brand new password' },
  });
  t.is(change.status, 200);
  await changed.ended;

  // The access token lives 15 minutes; the stream ends with it, without any batch or heartbeat.
  const expiring = await openSse(
    `${api.baseUrl}${streamPath}`,
    bearer(change.json.token as string),
  );
  await expiring.until((blocks) => blocks.length === 1);
  api.clock.advance(15 * 60_000 + 1_000);
  await expiring.ended;
  await eventually(() => api.hub.size === 0);
  t.pass();
});

test('per-account and global caps answer 429 with Retry-After; a closed stream frees its slot', async (t) => {
  const api = await streamApi(t, { maxPerAccount: 2, maxTotal: 3, retryAfterSeconds: 7 });
  const olga = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const piet = await api.signIn((await api.addUser('piet', ['Viewers'])).username);
  const scada = await api.serviceToken('scada', ['Viewers']);
  const a = await openSse(`${api.baseUrl}${streamPath}`, bearer(olga));
  const b = await openSse(`${api.baseUrl}${streamPath}`, bearer(olga));
  t.is(a.status, 200);
  t.is(b.status, 200);
  const overAccount = await openSse(`${api.baseUrl}${streamPath}`, bearer(olga));
  t.is(overAccount.status, 429);
  t.is(overAccount.headers['retry-after'], '7');
  const problem = JSON.parse(overAccount.body);
  t.is(problem.code, 'stream-capacity-reached');
  t.regex(problem.detail, /this account already has 2 streams open/);

  const c = await openSse(`${api.baseUrl}${streamPath}`, bearer(piet));
  t.is(c.status, 200);
  const overTotal = await openSse(`${api.baseUrl}${streamPath}`, bearer(scada));
  t.is(overTotal.status, 429);
  t.regex(JSON.parse(overTotal.body).detail, /the gateway already has 3 streams open/);

  a.close();
  await eventually(() => api.hub.size === 2);
  const d = await openSse(`${api.baseUrl}${streamPath}`, bearer(scada));
  t.is(d.status, 200, 'a service token streams too');
  for (const stream of [b, c, d]) stream.close();
});

test('closeAll (daemon stop) ends every stream at once', async (t) => {
  const api = await streamApi(t);
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const streams = await Promise.all(
    [1, 2].map(() => openSse(`${api.baseUrl}${streamPath}`, bearer(token))),
  );
  await Promise.all(streams.map((stream) => stream.until((blocks) => blocks.length === 1)));
  api.hub.closeAll();
  await Promise.all(streams.map((stream) => stream.ended));
  t.is(api.hub.size, 0);
  t.is(api.clock.pendingTimers(), 0, 'no heartbeat or expiry timer left behind');
});

test("a stream outlives the listener's header and request timeouts", async (t) => {
  const api = await streamApi(t, { heartbeatMs: 400 }, true);
  const listener = new HttpListener({
    host: '127.0.0.1',
    port: 0,
    handler: createApp(api.deps).callback(),
    logger: api.logs.logger,
    headersTimeoutMs: 300,
    requestTimeoutMs: 300,
  });
  await listener.start();
  t.teardown(() => listener.stop());
  const token = await api.signIn((await api.addUser('olga', ['Viewers'])).username);
  const stream = await openSse(`${listener.url()}${streamPath}`, bearer(token));
  // Five heartbeats are 2 s: several times both timeouts, checked every 150 ms by node.
  await stream.until(
    (blocks) => blocks.filter((block) => block.comment === 'heartbeat').length >= 5,
    'five heartbeats',
  );
  api.store.write([good('A/B', 1)]);
  await stream.until((blocks) => dataBlocks(blocks).length === 2, 'an event after them');
  t.pass();
  stream.close();
});
