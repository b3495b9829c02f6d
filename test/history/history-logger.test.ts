import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { HistoryBackend, LoggedSample } from '../../src/history/history-backend.js';
import type { HistoryLogEntry } from '../../src/history/history-config.js';
import { HistoryLogger, type HistoryLoggerOptions } from '../../src/history/history-logger.js';
import { createSqliteBackend } from '../../src/history/sqlite-backend.js';
import { Collections } from '../../src/tags/collections.js';
import type { Quality, Sample, TagValue } from '../../src/tags/sample.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { tempDir } from '../helpers/temp-dir.js';

const t0 = Date.UTC(2026, 0, 1);
const day = 86_400_000;

/**
 * The real sqlite backend behind a thin wrapper that counts appends and, while `down` is set,
 * throws instead of appending (or, with `hang`, never answers), as an unreachable database.
 * `refuse` makes it refuse every batch holding a matching sample (as a database refuses a
 * value), `failWith` refuses every batch with that error; `ops` counts appends and retention
 * runs under way together.
 */
class FlakyBackend implements HistoryBackend {
  down = false;
  hang = false;
  /** Retention runs wait for a release too. */
  hangDelete = false;
  refuse: ((sample: LoggedSample) => boolean) | undefined;
  failWith: Error | undefined;
  appendCalls = 0;
  /** Size of every append call, in call order. */
  readonly sizes: number[] = [];
  inFlight = 0;
  maxInFlight = 0;
  ops = 0;
  maxOps = 0;
  /** Resolves the appends (and retention runs) held by `hang` (and `hangDelete`). */
  readonly releases: (() => void)[] = [];
  constructor(readonly inner: HistoryBackend) {}
  start() {
    return this.inner.start();
  }
  stop() {
    return this.inner.stop();
  }
  async append(samples: readonly LoggedSample[]) {
    this.appendCalls++;
    this.sizes.push(samples.length);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.maxOps = Math.max(this.maxOps, ++this.ops);
    try {
      if (this.hang) await new Promise<void>((resolve) => this.releases.push(resolve));
      if (this.down) throw Object.assign(new Error('connection refused'), { unreachable: true });
      if (this.failWith) throw this.failWith;
      const refused = this.refuse && samples.find(this.refuse);
      if (refused) {
        // As PostgreSQL refuses a value: SQLSTATE 22P02, invalid_text_representation.
        throw Object.assign(new Error(`invalid value of ${refused.fullTagId}`), { code: '22P02' });
      }
      await this.inner.append(samples);
    } finally {
      this.inFlight--;
      this.ops--;
    }
  }
  async deleteBefore(beforeMs: number) {
    this.maxOps = Math.max(this.maxOps, ++this.ops);
    try {
      if (this.hangDelete) await new Promise<void>((resolve) => this.releases.push(resolve));
      return await this.inner.deleteBefore(beforeMs);
    } finally {
      this.ops--;
    }
  }
  raw = (...args: Parameters<HistoryBackend['raw']>) => this.inner.raw(...args);
  aggregate = (...args: Parameters<HistoryBackend['aggregate']>) => this.inner.aggregate(...args);
  count = (...args: Parameters<HistoryBackend['count']>) => this.inner.count(...args);
  tagIds = (pattern: string) => this.inner.tagIds(pattern);
  lastSeq = () => this.inner.lastSeq();
}

interface Setup {
  clock: ManualClock;
  store: TagStore;
  backend: FlakyBackend;
  history: HistoryLogger;
  logs: ReturnType<typeof captureLogs>;
  collections: Collections;
  /** Writes samples stamped with the clock's now. */
  write(...samples: [string, TagValue | undefined, Quality?][]): void;
  /** Every stored sample of a tag, in time order. */
  stored(fullTagId: string): Promise<LoggedSample[]>;
  /** Advances the clock and lets the appends it started finish. */
  tick(ms?: number): Promise<void>;
}

async function setup(
  t: ExecutionContext,
  entries: HistoryLogEntry[],
  options: Partial<HistoryLoggerOptions> = {},
): Promise<Setup> {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const backend = new FlakyBackend(
    createSqliteBackend({ file: join(await tempDir(t), 'h.db'), logger: logs.logger }),
  );
  await backend.start();
  const collections = new Collections(store, [{ name: 'Line1', members: ['Line1/**'] }]);
  await collections.start();
  const history = new HistoryLogger({
    backend,
    store,
    collections,
    entries,
    retentionDays: 30,
    bufferLimit: 1_000,
    clock,
    logger: logs.logger,
    ...options,
  });
  await history.start();
  t.teardown(async () => {
    backend.down = false;
    backend.hang = false;
    backend.hangDelete = false;
    backend.refuse = undefined;
    backend.failWith = undefined;
    for (const release of backend.releases) release();
    await history.stop();
    await backend.stop();
  });
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return {
    clock,
    store,
    backend,
    history,
    logs,
    collections,
    write: (...samples) =>
      store.write(
        samples.map(([fullTagId, value, quality = 'Good']): Sample => {
          const sample: Sample = {
            fullTagId,
            utcTimestamp: new Date(clock.now()).toISOString(),
            quality,
          };
          if (value !== undefined) sample.value = value;
          return sample;
        }),
      ),
    stored: async (fullTagId) =>
      (
        await backend.inner.raw({ tagIds: [fullTagId], startMs: 0, stopMs: t0 * 2, limit: 1e6 })
      ).map(({ seq: _seq, ...rest }) => rest),
    tick: async (ms = 1000) => {
      clock.advance(ms);
      for (let i = 0; i < 5; i++) await settle();
    },
  };
}

/** A Good sample of `Line1/temp`, `ms` after t0 (as an edge's reading forwarded or re-stated). */
const at = (ms: number, value: number): Sample => ({
  fullTagId: 'Line1/temp',
  utcTimestamp: new Date(t0 + ms).toISOString(),
  quality: 'Good',
  value,
});

const onChange = (source: string, deadband?: number): HistoryLogEntry => ({
  source,
  mode: 'onChange',
  ...(deadband !== undefined ? { deadband } : {}),
});

test('onChange logs the first sample and every change of value or quality, not re-reads', async (t) => {
  const s = await setup(t, [onChange('Line1/**')]);
  s.write(['Line1/a', 1]);
  await s.tick(100);
  s.write(['Line1/a', 1]); // same value, new timestamp: not a change
  await s.tick(100);
  s.write(['Line1/a', 2]);
  await s.tick(100);
  s.write(['Line1/a', undefined, 'Bad']);
  await s.tick(100);
  s.write(['Line1/a', 2]);
  s.write(['Other/x', 5]); // not covered by any entry
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/a')).map((x) => [x.epochMs - t0, x.quality, x.value]),
    [
      [0, 'Good', 1],
      [200, 'Good', 2],
      [300, 'Bad', undefined],
      [400, 'Good', 2],
    ],
  );
  t.deepEqual(await s.stored('Other/x'), []);
});

test('deadband: a number logs when it moved more than the deadband from the last logged value; a quality change always logs', async (t) => {
  const s = await setup(t, [onChange('Line1/**', 0.5)]);
  for (const value of [10, 10.3, 10.5, 10.6, 10.9, 11.2, 11.2]) {
    s.write(['Line1/temp', value]);
    await s.tick(10);
  }
  s.write(['Line1/temp', 11.3, 'Stale']);
  await s.tick(10);
  s.write(['Line1/flag', true]);
  await s.tick(10);
  s.write(['Line1/flag', false]); // not a number: any change logs
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/temp')).map((x) => [x.quality, x.value]),
    [
      ['Good', 10],
      ['Good', 10.6], // 10.3 and 10.5 are within 0.5 of 10 (0.5 is not "more than")
      ['Good', 11.2], // 10.9 is within 0.5 of 10.6; creeping does not accumulate
      ['Stale', 11.3],
    ],
  );
  t.deepEqual(
    (await s.stored('Line1/flag')).map((x) => x.value),
    [true, false],
  );
});

test('samples of the past (Sparkplug is_historical) are logged at their own timestamps, whatever the deadband, and leave the live value and its deadband alone', async (t) => {
  const s = await setup(t, [onChange('Line1/**', 5)]);
  s.write(['Line1/temp', 100]);
  await s.tick(10);
  const past = (ms: number, value: number): Sample => ({
    fullTagId: 'Line1/temp',
    utcTimestamp: new Date(t0 - ms).toISOString(),
    quality: 'Good',
    value,
  });
  s.store.writeHistorical([past(60_000, 1), past(59_000, 1.5)]);
  // Not logged: not covered, or not in the store.
  s.store.writeHistorical([{ ...past(1000, 3), fullTagId: 'Other/x' }]);
  s.store.writeHistorical([{ ...past(1000, 3), fullTagId: 'Line1/unknown' }]);
  t.is(s.store.get('Line1/temp')?.value, 100);
  s.write(['Line1/temp', 103]); // within the deadband of 100, the last live value logged
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/temp')).map((x) => [x.epochMs - t0, x.value]),
    [
      [-60_000, 1],
      [-59_000, 1.5],
      [0, 100],
    ],
  );
  t.deepEqual(await s.stored('Line1/unknown'), []);
});

test('a sample of the past already logged (the birth carried it, or the edge sent it again) is not logged twice', async (t) => {
  const s = await setup(t, [onChange('Line1/**')]);
  // The edge's births carry its current value, read before the host was back, so that read is
  // also the last of the samples it stored: forwarded, it is the sample the birth logged.
  s.write(['Line1/temp', 100]);
  await s.tick(10);
  s.store.writeHistorical([at(-2000, 98), at(-1000, 99), at(0, 100)]);
  // A catch-up resent after a lost connection starts again from samples already logged.
  s.store.writeHistorical([at(-1000, 99), at(0, 100)]);
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/temp')).map((x) => [x.epochMs - t0, x.value]),
    [
      [-2000, 98],
      [-1000, 99],
      [0, 100],
    ],
  );
});

test('a sample of the past skipped as the one the birth logged stays skipped when the edge sends it again after an outage', async (t) => {
  const s = await setup(t, [onChange('Line1/**')]);
  s.write(['Line1/temp', 100]);
  await s.tick(10);
  // Forwarded after the birth: the birth's sample, skipped.
  s.store.writeHistorical([at(0, 100)]);
  // The broker dies before it acknowledged that forward: the host writes the tag Unavailable
  // (the last live sample logged now), and the edge sends the sample again once back.
  s.write(['Line1/temp', undefined, 'Unavailable']);
  await s.tick(10);
  s.store.writeHistorical([at(0, 100)]);
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/temp')).map((x) => [x.epochMs - t0, x.value ?? x.quality]),
    [
      [0, 100],
      [10, 'Unavailable'],
    ],
  );
});

test('a live sample the edge sends again as one of the past (its acknowledgement lost with the broker) is not logged twice', async (t) => {
  const s = await setup(t, [onChange('Line1/**')]);
  // Delivered live and logged; the broker dies before the edge has its PUBACK, so the edge
  // keeps it in its outbox.
  s.store.write([at(0, 100)]);
  await s.tick(10);
  s.write(['Line1/temp', undefined, 'Unavailable']);
  await s.tick(3000);
  // Back: the births carry the current value, then the outbox: the unacknowledged sample, then
  // what was read meanwhile.
  s.store.write([at(3000, 103)]);
  await s.tick(10);
  s.store.writeHistorical([at(0, 100), at(1000, 101), at(2000, 102)]);
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/temp')).map((x) => [x.epochMs - t0, x.value ?? x.quality]),
    [
      [0, 100],
      [1000, 101],
      [2000, 102],
      [3000, 103],
      [10, 'Unavailable'],
    ].sort((a, b) => (a[0] as number) - (b[0] as number)),
  );
});

test('a rebirth re-stating a sample already logged (its NBIRTH turned the tag Unavailable since) does not log it twice', async (t) => {
  const s = await setup(t, [onChange('Line1/**')]);
  const at = (fullTagId: string, ms: number, value: number): Sample => ({
    fullTagId,
    utcTimestamp: new Date(t0 + ms).toISOString(),
    quality: 'Good',
    value,
  });
  // The births answering the host's online STATE: the current value, read at 0, logged live.
  s.store.write([at('Line1/a', 0, 100)]);
  await s.tick(500);
  // A rebirth the host requested before it had read those births (docs/relay.md): the NBIRTH
  // turns the device's tags Unavailable now, its DBIRTH carries the same reading again.
  s.write(['Line1/a', undefined, 'Unavailable']);
  s.store.write([at('Line1/a', 0, 100)]);
  await s.tick(500);
  // The same with a reading the catch-up forwarded (is_historical) before the rebirth.
  s.store.write([at('Line1/b', 0, 200)]);
  await s.tick(10);
  s.store.writeHistorical([at('Line1/b', 200, 201), at('Line1/b', 400, 202)]);
  s.write(['Line1/b', undefined, 'Unavailable']);
  s.store.write([at('Line1/b', 400, 202)]);
  await s.tick(10);
  // The next reading after either is logged as ever.
  s.store.write([at('Line1/a', 1500, 101), at('Line1/b', 1500, 203)]);
  await s.tick(1000);
  const rows = async (id: string) =>
    (await s.stored(id)).map((x) => [x.epochMs - t0, x.value ?? x.quality]);
  t.deepEqual(await rows('Line1/a'), [
    [0, 100],
    [500, 'Unavailable'],
    [1500, 101],
  ]);
  t.deepEqual(await rows('Line1/b'), [
    [0, 200],
    [200, 201],
    [400, 202],
    [1010, 'Unavailable'],
    [1500, 203],
  ]);
});

test('several entries covering a tag: the finest deadband wins', async (t) => {
  const s = await setup(t, [onChange('Line1/**', 5), onChange('Line1/fine', 0.1)]);
  for (const value of [1, 1.2, 1.25]) {
    s.write(['Line1/fine', value], ['Line1/coarse', value]);
    await s.tick(10);
  }
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/fine')).map((x) => x.value),
    [1, 1.2],
  );
  t.deepEqual(
    (await s.stored('Line1/coarse')).map((x) => x.value),
    [1],
  );
});

test('interval: the current sample of every covered tag every N seconds, stamped with the sampling time', async (t) => {
  const s = await setup(t, [{ source: 'Line1/*', mode: 'interval', intervalSeconds: 5 }]);
  s.write(['Line1/a', 1], ['Line1/b', 'x'], ['Line1/deep/c', 3]);
  await s.tick(4_000);
  t.deepEqual(await s.stored('Line1/a'), [], 'nothing before the first interval');
  s.write(['Line1/a', 2]);
  s.write(['Line1/a', 3]); // changes between samples are not logged
  await s.tick(1_000);
  await s.tick(5_000);
  s.write(['Line1/a', undefined, 'Unavailable']);
  await s.tick(5_000);
  await s.tick(1_000);
  t.deepEqual(
    (await s.stored('Line1/a')).map((x) => [x.epochMs - t0, x.quality, x.value]),
    [
      [5_000, 'Good', 3],
      [10_000, 'Good', 3],
      [15_000, 'Unavailable', undefined],
    ],
  );
  t.deepEqual(
    (await s.stored('Line1/b')).map((x) => x.value),
    ['x', 'x', 'x'],
  );
  t.deepEqual(await s.stored('Line1/deep/c'), [], '* is one segment');
});

test('a collection entry logs its members and follows the collection when it is replaced', async (t) => {
  const s = await setup(t, [{ collection: 'Line1', mode: 'onChange' }]);
  s.write(['Line1/a', 1], ['Line2/b', 1]);
  await s.tick(10);
  s.collections.put({ name: 'Line1', members: ['Line2/**'] });
  s.write(['Line1/a', 2], ['Line2/b', 2]);
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Line1/a')).map((x) => x.value),
    [1],
  );
  t.deepEqual(
    (await s.stored('Line2/b')).map((x) => x.value),
    [2],
  );
});

test('tags already in the store when logging starts are logged once at start', async (t) => {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    { fullTagId: 'Pre/a', utcTimestamp: new Date(t0 - 5).toISOString(), quality: 'Good', value: 7 },
  ]);
  const logs = captureLogs();
  const backend = createSqliteBackend({
    file: join(await tempDir(t), 'h.db'),
    logger: logs.logger,
  });
  await backend.start();
  const history = new HistoryLogger({
    backend,
    store,
    entries: [onChange('Pre/**')],
    retentionDays: 30,
    bufferLimit: 1000,
    clock,
    logger: logs.logger,
  });
  await history.start();
  await history.stop();
  const read = await backend.raw({ tagIds: ['Pre/a'], startMs: 0, stopMs: t0, limit: 10 });
  t.deepEqual(
    read.map((x) => [x.epochMs, x.value]),
    [[t0 - 5, 7]],
  );
  await backend.stop();
});

test('batching: writes within a flush period go in one transaction, at most one per second', async (t) => {
  const s = await setup(t, [onChange('**')]);
  for (let second = 0; second < 5; second++) {
    for (let i = 0; i < 20; i++) {
      s.write([`Batch/t${i}`, second * 100 + i]);
      await s.tick(40);
    }
    await s.tick(200); // 20 × 40 ms + 200 ms = one second
  }
  t.true(s.backend.appendCalls <= 5, `${s.backend.appendCalls} appends in 5 s`);
  t.true(s.backend.appendCalls >= 4);
  t.is(s.history.stats().transactions, s.backend.appendCalls);
  t.is(s.history.stats().appended, 100);
  t.is(await s.backend.inner.count({ tagIds: ['Batch/t3'], startMs: 0, stopMs: t0 * 2 }), 5);
});

test('a down backend: samples are buffered up to the bound, the oldest dropped with a counter and one log line; all resumes when it is back', async (t) => {
  const s = await setup(t, [onChange('**')], { bufferLimit: 10 });
  s.backend.down = true;
  for (let i = 0; i < 25; i++) {
    s.write(['Down/a', i]);
    await s.tick(300);
  }
  const stats = s.history.stats();
  t.is(stats.buffered, 10);
  t.is(stats.dropped, 15);
  t.true(stats.failedAppends >= 5, 'retried every flush');
  t.is(stats.appended, 0);
  t.is(s.logs.lines.filter((line) => /buffer full/.test(line.msg ?? '')).length, 1);
  t.is(s.logs.lines.filter((line) => /refused an append/.test(line.msg ?? '')).length, 1);
  s.backend.down = false;
  await s.tick(1000);
  t.deepEqual(
    (await s.stored('Down/a')).map((x) => x.value),
    [15, 16, 17, 18, 19, 20, 21, 22, 23, 24],
    'the newest samples are kept, in order',
  );
  const recovered = s.logs.lines.find((line) => /accepts appends again;/.test(line.msg ?? ''));
  t.is(recovered?.dropped, 15);
  t.is(s.history.stats().buffered, 0);
});

test('a hanging backend never blocks writers: one append at a time, the buffer stays bounded', async (t) => {
  const s = await setup(t, [onChange('**')], { bufferLimit: 50 });
  s.backend.hang = true;
  const began = performance.now();
  for (let i = 0; i < 500; i++) {
    s.write(['Hang/a', i]);
    await s.tick(100);
  }
  t.true(performance.now() - began < 20_000);
  t.is(s.backend.maxInFlight, 1, 'appends are not piled up');
  t.is(s.backend.appendCalls, 1);
  t.true(s.history.stats().buffered <= 50);
  t.true(s.history.stats().dropped > 0);
  // Released (as a driver's socket timeout would), the held batch and the buffer get stored.
  s.backend.hang = false;
  for (const release of s.backend.releases) release();
  await s.history.flush();
  t.true((await s.stored('Hang/a')).length > 0);
});

test('retention deletes samples older than retentionDays at start and then hourly', async (t) => {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const backend = createSqliteBackend({
    file: join(await tempDir(t), 'h.db'),
    logger: logs.logger,
  });
  await backend.start();
  t.teardown(() => backend.stop());
  await backend.append([
    { fullTagId: 'Ret/a', epochMs: t0 - 3 * day, quality: 'Good', value: 1 },
    { fullTagId: 'Ret/a', epochMs: t0 - 2 * day + 30 * 60_000, quality: 'Good', value: 2 },
    { fullTagId: 'Ret/a', epochMs: t0 - day, quality: 'Good', value: 3 },
  ]);
  const history = new HistoryLogger({
    backend,
    store,
    entries: [],
    retentionDays: 2,
    bufferLimit: 1000,
    clock,
    logger: logs.logger,
  });
  await history.start();
  await history.flush();
  const values = async () =>
    (await backend.raw({ tagIds: ['Ret/a'], startMs: 0, stopMs: t0 * 2, limit: 10 })).map(
      (x) => x.value,
    );
  t.deepEqual(await values(), [2, 3], 'at start');
  clock.advance(3_600_000);
  await history.flush();
  t.deepEqual(await values(), [3], 'an hour later');
  t.truthy(logs.lines.find((line) => line.msg === 'history retention deleted old samples'));
  await history.stop();
  t.is(clock.pendingTimers(), 0);
});

test('stop appends what is still buffered', async (t) => {
  const s = await setup(t, [onChange('**')]);
  s.write(['Stop/a', 1]);
  await s.tick(500);
  s.write(['Stop/a', 2]);
  await s.history.stop();
  t.deepEqual(
    (await s.stored('Stop/a')).map((x) => x.value),
    [1, 2],
  );
  t.is(s.clock.pendingTimers(), 0);
});

test('stop gives up on a backend that no longer answers, after stopTimeoutMs', async (t) => {
  const s = await setup(t, [onChange('**')], { stopTimeoutMs: 5_000 });
  s.backend.hang = true;
  s.write(['Gone/a', 1], ['Gone/b', 1]);
  const stopping = s.history.stop(); // its final append hangs
  await new Promise((resolve) => setImmediate(resolve));
  s.clock.advance(5_000);
  await stopping;
  const warning = s.logs.lines.find((line) => /did not finish its append/.test(line.msg ?? ''));
  t.is(warning?.inFlight, 2);
  t.is(s.clock.pendingTimers(), 0);
});

test('retention never runs together with an append: the append ending does not clear the retention queued after it', async (t) => {
  const s = await setup(t, [onChange('**')], { retentionIntervalMs: 5_000 });
  await s.tick(0); // the retention run of the start is over
  s.backend.hang = true;
  s.write(['Ovl/a', 1]);
  await s.tick(1_000); // the append starts and hangs
  s.backend.hangDelete = true;
  await s.tick(4_000); // retention is queued after the append
  s.backend.hang = false;
  for (const release of s.backend.releases.splice(0)) release();
  await s.tick(0); // the append ends; retention starts and hangs
  s.write(['Ovl/a', 2]);
  await s.tick(1_000); // a flush must wait for the retention
  t.is(s.backend.maxOps, 1, 'one backend operation at a time');
  s.backend.hangDelete = false;
  for (const release of s.backend.releases.splice(0)) release();
  await s.history.flush();
  t.deepEqual(
    (await s.stored('Ovl/a')).map((x) => x.value),
    [1, 2],
  );
  t.is(s.backend.maxOps, 1);
});

test('a big buffer is appended in several transactions of at most maxBatch, one after the other without waiting for the next flush', async (t) => {
  const s = await setup(t, [onChange('**')], { maxBatch: 30 });
  await s.tick(0); // the retention run of the start is over
  s.write(...Array.from({ length: 100 }, (_, i): [string, number] => [`Big/t${i}`, i]));
  await s.tick(1_000);
  // No clock advance: the rest of the buffer goes right after the first transaction.
  for (let i = 0; i < 100 && s.history.stats().appended < 100; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.deepEqual(s.backend.sizes, [30, 30, 30, 10]);
  t.is(s.backend.maxInFlight, 1, 'one append at a time');
  t.is(s.history.stats().transactions, 4);
  t.is(s.history.stats().buffered, 0);
  t.deepEqual(
    (await s.stored('Big/t99')).map((x) => x.value),
    [99],
  );
});

test('samples the backend refuses are isolated by halving the batch, dropped, counted and logged once; the rest is stored and logging goes on', async (t) => {
  const s = await setup(t, [onChange('**')]);
  s.backend.refuse = (sample) => sample.value === 'poison';
  s.write(
    ...Array.from({ length: 20 }, (_, i): [string, TagValue] => [
      `Rej/t${i}`,
      i === 3 || i === 17 ? 'poison' : i,
    ]),
  );
  await s.tick(1_000);
  await s.history.flush();
  const stats = s.history.stats();
  t.is(stats.rejected, 2);
  t.is(stats.appended, 18);
  t.is(stats.buffered, 0);
  t.is(stats.failedAppends, 0, 'nothing kept to retry');
  t.deepEqual(await s.stored('Rej/t3'), []);
  t.deepEqual(
    (await s.stored('Rej/t4')).map((x) => x.value),
    [4],
  );
  const lines = s.logs.lines.filter((line) => /refused/.test(line.msg ?? ''));
  t.is(lines.length, 1, 'one line per batch');
  t.deepEqual(lines[0]?.tags, ['Rej/t3', 'Rej/t17']);
  t.false(JSON.stringify(lines[0]).includes('poison'), 'no values in the log line');
  t.true(s.backend.appendCalls < 20, `${s.backend.appendCalls} appends: halving, not one by one`);
  // The next batch is stored as usual.
  s.write(['Rej/t4', 44]);
  await s.tick(1_000);
  t.deepEqual(
    (await s.stored('Rej/t4')).map((x) => x.value),
    [4, 44],
  );
  t.is(s.history.stats().rejected, 2);
});

for (const [what, error] of [
  ['a pool that timed out (no code)', new Error('timeout exceeded when trying to connect')],
  [
    'a wrong password (28P01)',
    Object.assign(new Error('password authentication failed'), { code: '28P01' }),
  ],
  [
    'a TLS failure',
    Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
  ],
] as const) {
  test(`${what} is a failure of the backend: the batch is kept whole, nothing is rejected`, async (t) => {
    const s = await setup(t, [onChange('**')]);
    await s.tick(0);
    s.backend.failWith = error;
    s.write(['Keep/a', 1], ['Keep/b', 2], ['Keep/c', 3]);
    await s.tick(1_000);
    await s.tick(1_000);
    t.is(s.history.stats().rejected, 0);
    t.is(s.history.stats().buffered, 3);
    t.true(
      s.backend.sizes.every((size) => size === 3),
      'not split',
    );
    s.backend.failWith = undefined;
    await s.tick(1_000);
    t.is(s.history.stats().appended, 3);
  });
}

test('an error of the whole backend (disk full) keeps the batch to retry instead of dropping samples', async (t) => {
  const s = await setup(t, [onChange('**')]);
  await s.tick(0); // the retention run of the start is over
  s.backend.failWith = Object.assign(new Error('database or disk is full'), {
    code: 'SQLITE_FULL',
  });
  s.write(['Full/a', 1], ['Full/b', 2]);
  await s.tick(1_000);
  await s.tick(1_000);
  t.is(s.history.stats().rejected, 0);
  t.is(s.history.stats().buffered, 2);
  t.true(s.history.stats().failedAppends >= 2);
  t.true(
    s.backend.sizes.every((size) => size === 2),
    'not split',
  );
  s.backend.failWith = undefined;
  await s.tick(1_000);
  t.is(s.history.stats().appended, 2);
});

/** A simulator-like scan: `count` tags, each a new value every scan (value = scan + index). */
function scanner(s: Setup, count: number, prefix = 'Sim') {
  const tags = Array.from({ length: count }, (_, i) => `${prefix}/Line${i % 100}/Tag${i}`);
  let scan = 0;
  return () => {
    scan++;
    const utcTimestamp = new Date(s.clock.now()).toISOString();
    s.store.write(
      tags.map(
        (fullTagId, i): Sample => ({ fullTagId, utcTimestamp, quality: 'Good', value: scan + i }),
      ),
    );
  };
}

// Serial (AVA runs these before the concurrent tests): its appends hold the event loop for
// seconds, which would stretch the real-time bound of the hanging-backend test beside it.
test.serial(
  '100,000 tags changing at every 1 s scan, default bound: nothing is dropped',
  async (t) => {
    const s = await setup(t, [onChange('**')], { bufferLimit: undefined });
    await s.tick(0); // the retention run of the start is over
    const scan = scanner(s, 100_000);
    // As in the daemon: the history starts first, then the driver scans at once and every second
    // (its timer falls due right after the logger's flush timer).
    scan();
    s.clock.setInterval(scan, 1_000);
    for (let second = 0; second < 6; second++) {
      s.clock.advance(1_000);
      await s.history.flush();
    }
    const stats = s.history.stats();
    t.is(stats.dropped, 0);
    t.is(stats.appended, 700_000);
    t.is(stats.bufferLimit, 1_000_000, '10 samples per logged tag');
    t.is(s.logs.lines.filter((line) => /buffer full/.test(line.msg ?? '')).length, 0);
    t.is(s.backend.maxInFlight, 1, 'one append at a time');
    t.is(
      await s.backend.inner.count({ tagIds: ['Sim/Line7/Tag99907'], startMs: 0, stopMs: t0 * 2 }),
      7,
    );
  },
);

test('a full transaction waiting is appended at once, without waiting for the flush period (not while the backend is down)', async (t) => {
  const s = await setup(t, [onChange('**')], { maxBatch: 100 });
  await s.tick(0);
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  const scan = scanner(s, 60);
  scan();
  await settle();
  t.is(s.backend.appendCalls, 0, '60 samples wait for the flush period');
  scan();
  await settle();
  // No clock advance: 120 samples waiting are more than a transaction takes.
  t.deepEqual(s.backend.sizes, [100, 20]);
  t.is(s.history.stats().appended, 120);
  t.is(s.backend.maxInFlight, 1);
  // Down: an early flush finds the outage; later ones wait for the flush period to retry.
  s.backend.down = true;
  scan();
  scan();
  await settle();
  t.is(s.backend.appendCalls, 3);
  t.true(s.history.inOutage);
  scan();
  scan();
  await settle();
  t.is(s.backend.appendCalls, 3, 'no retry at every write during an outage');
  s.backend.down = false;
  await s.tick(1_000);
  await s.history.flush();
  t.is(s.history.stats().appended, 360);
  t.is(s.history.stats().dropped, 0);
});

test.serial(
  'the default bound is 10 samples per logged tag (onChange and interval), at least 100,000',
  async (t) => {
    const s = await setup(
      t,
      [onChange('A/**'), { source: 'B/**', mode: 'interval', intervalSeconds: 1 }],
      { bufferLimit: undefined },
    );
    await s.tick(0);
    t.is(s.history.stats().bufferLimit, 100_000, 'nothing logged yet: the floor');
    s.backend.down = true;
    const scanA = scanner(s, 12_000, 'A');
    const scanB = scanner(s, 8_000, 'B');
    for (let second = 0; second < 12; second++) {
      scanA();
      scanB();
      await s.tick(1_000);
    }
    const stats = s.history.stats();
    t.is(stats.bufferLimit, 200_000);
    t.is(stats.buffered, 200_000);
    t.is(stats.dropped, 12 * 20_000 - 200_000);
    const full = s.logs.lines.find((line) => /buffer full/.test(line.msg ?? ''));
    t.is(full?.bufferLimit, 200_000);
  },
);

test('a backend slower than the samples arrive: one warning per spell, a summary once it caught up', async (t) => {
  const s = await setup(t, [onChange('**')], { bufferLimit: 100 });
  await s.tick(0);
  const settle = async () => {
    for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  const scan = scanner(s, 130);
  for (let spell = 0; spell < 2; spell++) {
    scan(); // one write of 130 samples into a bound of 100
    await settle();
  }
  t.is(s.history.stats().dropped, 60);
  t.is(s.history.stats().appended, 200);
  t.deepEqual(
    s.logs.lines
      .filter((line) => /buffer full|caught up/.test(line.msg ?? ''))
      .map((line) => line.dropped ?? line.bufferLimit),
    [100, 30, 100, 30],
  );
});
