/**
 * A device that stops answering while its connection stays open (issue 10, item 2): no tag may
 * stay Good. The driver turns the tags of unanswered requests Bad (Timeout) and, when it gives
 * up on the connection, the tags of the reads it abandons Unavailable; the store's refresh
 * bound, which the driver declares, turns any tag not refreshed in time Stale. On the manual
 * clock against a raw TCP peer that answers until told to fall silent.
 */
import { createServer, type Socket } from 'node:net';
import test from 'ava';
import type { Quality } from '../../../src/tags/sample.js';
import { modbusSubject } from '../../helpers/modbus-harness.js';
import { mbapRegistersAnswer, startRawModbusPeer } from '../../helpers/modbus-raw-peer.js';
import { until } from '../../helpers/until.js';

/** Five tags, each in a block of its own (addresses further apart than maxGap). */
const addresses = [0, 100, 200, 300, 400];
const tags = addresses.map((address, index) => ({
  name: `T${index + 1}`,
  table: 'holdingRegister',
  address,
}));
const ids = tags.map((tag) => `Dev/${tag.name}`);

/** A peer whose register at address a holds a + 1, until `silent` is set. */
async function fallingSilentPeer() {
  const state = { silent: false };
  const peer = await startRawModbusPeer((request) =>
    state.silent ? undefined : mbapRegistersAnswer(request, [request.address + 1]),
  );
  return { peer, state };
}

test.serial(
  'the reads abandoned when the driver gives up on a silent device turn Unavailable at once',
  async (t) => {
    const { peer, state } = await fallingSilentPeer();
    t.teardown(() => peer.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      pollIntervalMs: 1000,
      timeoutMs: 500,
      timeoutsBeforeReconnect: 3,
      reconnectDelayMs: 100,
      tags,
    });
    t.teardown(() => driver.stop());
    // The store's sweep is not started: this is the driver's own verdict, without the guard.
    await driver.start();
    await until(() => ids.every((id) => store.get(id)?.quality === 'Good'), 'every tag is Good');
    t.deepEqual(
      ids.map((id) => store.require(id).value),
      addresses.map((address) => address + 1),
    );

    state.silent = true;
    clock.advance(1000);
    // One request at a time: each timeout sends the next block's.
    for (const sent of [6, 7, 8]) {
      await until(() => peer.requests.length === sent, `request ${sent} is sent`);
      clock.advance(500);
    }
    await until(() => ids.every((id) => store.get(id)?.quality !== 'Good'), 'no tag is Good');
    const qualities = ids.map((id) => [store.require(id).quality, store.require(id).reason]);
    t.deepEqual(qualities, [
      ['Bad', 'Timeout'],
      ['Bad', 'Timeout'],
      ['Bad', 'Timeout'],
      ['Unavailable', 'Disconnected'],
      ['Unavailable', 'Disconnected'],
    ]);
    t.is(
      store.require('Dev/T4').message,
      'Not read: 3 requests in a row were not answered within 500 ms; reconnecting',
    );
    t.is(store.require('Dev/T5').value, undefined);
    t.is(driver.status().state, 'Reconnecting');
    // Block 4's request went out as block 3's timed out, just before the driver gave up on the
    // connection; block 5's never did.
    t.deepEqual(
      peer.requests.slice(5).map((request) => request.address),
      [0, 100, 200, 300],
    );

    // The new connection's poll times out the same way: still nothing Good.
    clock.advance(100);
    await until(() => peer.connections() === 2, 'a new connection is made');
    const onSecond = () => peer.requests.filter((request) => request.connection === 2).length;
    for (const sent of [1, 2, 3]) {
      await until(() => onSecond() === sent, `request ${sent} of the new connection is sent`);
      clock.advance(500);
    }
    await until(() => driver.status().counters?.disconnects === 2, 'the driver gives up again');
    t.true(ids.every((id) => store.require(id).quality !== 'Good'));
  },
);

test.serial(
  'a tag the driver does not refresh turns Stale after max(3 × interval, interval + requests × timeout)',
  async (t) => {
    const { peer, state } = await fallingSilentPeer();
    t.teardown(() => peer.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      pollIntervalMs: 1000,
      timeoutMs: 500,
      // Never gives up on the connection: a poll of five silent blocks takes 2.5 s, the longest
      // a poll of five requests can take, and its tags are written only when it ends.
      timeoutsBeforeReconnect: 100,
      tags,
    });
    t.teardown(() => driver.stop());
    await store.start();
    t.teardown(() => store.stop());
    await driver.start();
    t.deepEqual(
      ids.map((id) => store.staleLimitMs(id)),
      ids.map(() => 3500),
      'max(3 × 1000, 1000 + 5 requests × 500)',
    );
    await until(() => ids.every((id) => store.get(id)?.quality === 'Good'), 'every tag is Good');

    state.silent = true;
    clock.advance(1000);
    for (const sent of [6, 7, 8, 9, 10]) {
      await until(() => peer.requests.length === sent, `request ${sent} is sent`);
      if (sent < 10) clock.advance(500);
    }
    // t = 3499 ms after the last Good write: the poll is still under way, nothing written yet.
    clock.advance(499);
    const all = (quality: Quality) => ids.every((id) => store.get(id)?.quality === quality);
    t.true(all('Good'), 'Good up to the bound');
    // The fifth timeout ends the poll at the bound too, but its tags are written only once the
    // reads settle, after the sweep that runs within this advance.
    clock.advance(1);
    t.true(all('Stale'), 'Stale at the bound');
    t.like(store.require('Dev/T5'), {
      reason: 'NoUpdate',
      value: 401,
      message:
        'No update for 3500 ms, longer than its driver takes to refresh it while the device answers.',
    });
    // The driver's verdict replaces Stale.
    await until(() => all('Bad'), 'every tag is Bad');
    t.is(store.require('Dev/T5').reason, 'Timeout');
  },
);

test.serial('an explicit staleAfterMs tightens the bound but never loosens it', async (t) => {
  for (const [staleAfterMs, fast, slow] of [
    [undefined, 6000, 180_000],
    [2000, 2000, 2000],
    [10_000, 6000, 10_000],
  ] as const) {
    const { driver, store } = modbusSubject({
      // Nothing listens on port 1: only the declared bounds matter here.
      transport: { kind: 'tcp', host: '127.0.0.1', port: 1 },
      pollIntervalMs: 1000,
      timeoutMs: 2500,
      ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
      tags: [
        { name: 'Fast', table: 'coil', address: 0 },
        { name: 'Slow', table: 'coil', address: 1, pollIntervalMs: 60_000 },
      ],
    });
    await driver.start();
    // Two requests (one per group) on the connection: Fast: max(3 × 1000, 1000 + 2 × 2500);
    // Slow: max(3 × 60000, 60000 + 2 × 2500).
    t.is(store.staleLimitMs('Dev/Fast'), fast, `Fast with staleAfterMs ${staleAfterMs}`);
    t.is(store.staleLimitMs('Dev/Slow'), slow, `Slow with staleAfterMs ${staleAfterMs}`);
    await driver.stop();
  }
});

/** `n` holding-register tags, each in a block of its own. */
function blockTags(n: number, prefix = 'T', extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, index) => ({
    name: `${prefix}${index + 1}`,
    table: 'holdingRegister',
    address: index * 100,
    ...extra,
  }));
}

test.serial('the refresh bound grows with the requests a poll waits for', async (t) => {
  const tcp = { kind: 'tcp', host: '127.0.0.1', port: 1 };
  const cases: [string, Record<string, unknown>, Record<string, number>][] = [
    ['1 block', { transport: tcp, timeoutMs: 500, tags: blockTags(1) }, { 'Dev/T1': 3000 }],
    [
      '5 blocks, 1 at a time: 1000 + 5 × 500',
      { transport: tcp, timeoutMs: 500, tags: blockTags(5) },
      { 'Dev/T5': 3500 },
    ],
    [
      '12 blocks, 1 at a time: 1000 + 12 × 500',
      { transport: tcp, timeoutMs: 500, tags: blockTags(12) },
      { 'Dev/T1': 7000, 'Dev/T12': 7000 },
    ],
    [
      '12 blocks, 4 at a time: 1000 + 3 × 500',
      { transport: tcp, timeoutMs: 500, maxConcurrentRequests: 4, tags: blockTags(12) },
      { 'Dev/T1': 3000 },
    ],
    [
      '12 blocks, 5 at a time: 1000 + ⌈12 / 5⌉ × 1000',
      { transport: tcp, timeoutMs: 1000, maxConcurrentRequests: 5, tags: blockTags(12) },
      { 'Dev/T1': 4000 },
    ],
    [
      // An RTU line carries one request at a time, whatever maxConcurrentRequests says.
      '12 blocks on RTU: 1000 + 12 × 500',
      {
        transport: { kind: 'rtu', path: '/nonexistent/tty' },
        timeoutMs: 500,
        maxConcurrentRequests: 4,
        tags: blockTags(12),
      },
      { 'Dev/T1': 7000 },
    ],
    [
      // Both groups share the connection's queue: a poll may wait behind the other group's.
      'a 1 s group of 2 blocks and a 60 s group of 3 blocks: 5 requests',
      {
        transport: tcp,
        timeoutMs: 1000,
        tags: [...blockTags(2, 'F'), ...blockTags(3, 'S', { pollIntervalMs: 60_000 })],
      },
      { 'Dev/F1': 6000, 'Dev/S1': 180_000 },
    ],
    [
      'the fastest poll and timeout: at least a second',
      { transport: tcp, pollIntervalMs: 10, timeoutMs: 10, tags: blockTags(3) },
      { 'Dev/T1': 1000 },
    ],
  ];
  for (const [what, config, bounds] of cases) {
    const { driver, store } = modbusSubject({ pollIntervalMs: 1000, ...config });
    await driver.start();
    for (const [id, bound] of Object.entries(bounds)) t.is(store.staleLimitMs(id), bound, what);
    await driver.stop();
  }
});

test.serial('the start log gives each poll group’s refresh bound', async (t) => {
  const { driver, logs } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: 1 },
    pollIntervalMs: 1000,
    timeoutMs: 1000,
    tags: [...blockTags(2, 'F'), ...blockTags(3, 'S', { pollIntervalMs: 60_000 })],
  });
  await driver.start();
  await driver.stop();
  const started = logs.lines.find((line) => line.msg === 'Modbus driver started');
  t.deepEqual(started?.requestsPerPoll, [
    { intervalMs: 1000, requests: 2, refreshBoundMs: 6000 },
    { intervalMs: 60_000, requests: 3, refreshBoundMs: 180_000 },
  ]);
});

/** A TCP peer that holds each request until the test answers it (register a holds a + 1). */
async function heldAnswersPeer() {
  const held: { address: number; answer(): void }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 12) {
        const request = {
          id: pending.readUInt16BE(0),
          unit: pending[6] as number,
          functionCode: pending[7] as number,
        };
        const address = pending.readUInt16BE(8);
        pending = pending.subarray(12);
        held.push({
          address,
          answer: () => socket.write(mbapRegistersAnswer(request, [address + 1])),
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    held,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test.serial(
  'a device that answers every request just within the timeout keeps its tags Good',
  async (t) => {
    const peer = await heldAnswersPeer();
    t.teardown(() => peer.close());
    // Seven blocks, one request at a time, each answered after 499 of its 500 ms: a poll takes
    // 3.5 s, so polls start every 4 s and the tags are written 4 s apart, more than three
    // intervals (the bound before it counted the requests).
    const slowTags = blockTags(7);
    const slowIds = slowTags.map((tag) => `Dev/${tag.name}`);
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      pollIntervalMs: 1000,
      timeoutMs: 500,
      tags: slowTags,
    });
    const seen = new Set<Quality>();
    store.subscribe((updates) => {
      for (const { sample } of updates) seen.add(sample.quality);
    });
    t.teardown(() => driver.stop());
    await store.start();
    t.teardown(() => store.stop());
    const start = clock.now();
    await driver.start();
    t.is(store.staleLimitMs('Dev/T1'), 4500, 'max(3 × 1000, 1000 + 7 × 500)');
    const goodWrites: number[] = [];
    store.subscribe((updates) => {
      if (updates[0]?.sample.quality === 'Good') goodWrites.push(clock.now() - start);
    });
    for (let poll = 0; poll < 3; poll++) {
      for (let block = 0; block < 7; block++) {
        const sent = poll * 7 + block + 1;
        await until(() => peer.held.length === sent, `request ${sent} is sent`);
        clock.advance(499);
        peer.held[sent - 1]?.answer();
      }
      await until(() => goodWrites.length === poll + 1, `poll ${poll + 1} is written`);
      // On to the next tick of the interval: the ones during the poll were skipped.
      clock.advance(1000 - ((clock.now() - start) % 1000));
    }
    t.deepEqual(goodWrites, [3493, 7493, 11493]);
    t.is(driver.status().counters?.timeouts, 0);
    t.is(driver.status().counters?.pollsSkipped, 9, 'three ticks skipped during each poll');
    t.false(seen.has('Stale'), 'never Stale');
    t.true(slowIds.every((id) => store.require(id).quality === 'Good'));
    t.deepEqual(
      slowIds.map((id) => store.require(id).value),
      slowTags.map((tag) => tag.address + 1),
    );
  },
);

/** The MBAP exception answer to a request. */
function mbapException(request: { id: number; unit: number; functionCode: number }, code: number) {
  const bytes = Buffer.alloc(9);
  bytes.writeUInt16BE(request.id, 0);
  bytes.writeUInt16BE(0, 2);
  bytes.writeUInt16BE(3, 4);
  bytes[6] = request.unit;
  bytes[7] = request.functionCode | 0x80;
  bytes[8] = code;
  return bytes;
}

test.serial('a block split into one request per tag raises the bound', async (t) => {
  // Registers 0, 1 and 2 read as one block, which the device refuses as a whole.
  const peer = await startRawModbusPeer((request) =>
    request.count > 1 ? mbapException(request, 2) : mbapRegistersAnswer(request, [7]),
  );
  t.teardown(() => peer.close());
  const { driver, store } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
    pollIntervalMs: 1000,
    timeoutMs: 1000,
    tags: [0, 1, 2].map((address) => ({
      name: `R${address}`,
      table: 'holdingRegister',
      address,
    })),
  });
  t.teardown(() => driver.stop());
  await driver.start();
  t.is(store.staleLimitMs('Dev/R0'), 3000, 'max(3 × 1000, 1000 + 1 × 1000)');
  await until(() => store.get('Dev/R2')?.quality === 'Good', 'the tags are read one by one');
  t.is(driver.status().counters?.blocksSplit, 1);
  // The three one-tag requests, plus the refused block in the poll that split it.
  t.is(store.staleLimitMs('Dev/R0'), 5000, '1000 + (3 + 1) × 1000');
  t.is(store.staleLimitMs('Dev/R2'), 5000);
});
