/**
 * The PostgreSQL history backend against a real server (test/helpers/postgres-server.ts): the
 * shared backend contract, then what only PostgreSQL has: partitions, retention by dropping
 * them, password authentication, and surviving a server restart.
 */
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import type { HistoryBackend, LoggedSample } from '../../src/history/history-backend.js';
import { HistoryLogger } from '../../src/history/history-logger.js';
import {
  createPostgresBackend,
  type PostgresBackendOptions,
  PostgresHistoryError,
} from '../../src/history/postgres-backend.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  type PostgresServer,
  postgresSkipReason,
  startPostgresServer,
} from '../helpers/postgres-server.js';
import { until, untilTimeoutMs } from '../helpers/until.js';
import { backendContract, t0 } from './backend-contract.js';

const logger = pino({ level: 'silent' });
const day = 86_400_000;
const hour = 3_600_000;
const password = 'p@ss:w/rd%20ÿ';
const skipReason = postgresSkipReason();
/** Trust authentication; shared by the contract and most tests (each gets its own database). */
let server: PostgresServer | undefined;
/**
 * Password authentication; the tests that stop, kill or freeze a server use this one, one at a
 * time, and leave it running.
 */
let secured: PostgresServer | undefined;

test.before(async () => {
  if (skipReason !== undefined) return;
  [server, secured] = await Promise.all([startPostgresServer(), startPostgresServer({ password })]);
});
test.after.always(async () => {
  await Promise.all([server?.destroy(), secured?.destroy()]);
});

function good(fullTagId: string, epochMs: number, value: number): LoggedSample {
  return { fullTagId, epochMs, quality: 'Good', value };
}

/** A started backend over a fresh database of `on` (default: the shared trust server). */
async function open(
  t: ExecutionContext,
  options: Partial<PostgresBackendOptions> = {},
  on: PostgresServer = server as PostgresServer,
): Promise<{ backend: HistoryBackend; url: string; clock: ManualClock; database: string }> {
  const url = options.url ?? (await on.createDatabase());
  const clock = new ManualClock(t0);
  const backend = createPostgresBackend({ url, logger, clock, ...options });
  await backend.start();
  t.teardown(() => backend.stop());
  return { backend, url, clock, database: new URL(url).pathname.slice(1) };
}

/** Partition names of the samples table, from the catalog. */
function partitions(database: string, on = server as PostgresServer): string[] {
  const out = on.psql(
    `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
     WHERE i.inhparent = 'tagd_history_samples'::regclass ORDER BY 1`,
    database,
  );
  return out === '' ? [] : out.split('\n');
}

if (skipReason !== undefined) {
  test(`postgres history (skipped: ${skipReason})`, (t) => t.pass());
} else {
  backendContract(test, {
    name: 'postgres',
    serial: true,
    create: async () =>
      createPostgresBackend({
        url: await (server as PostgresServer).createDatabase(),
        logger,
        clock: new ManualClock(t0),
      }),
  });

  test.serial('partitions are made ahead on start and by the hourly upkeep', async (t) => {
    const { backend, clock, database } = await open(t, { partitionsAhead: 2 });
    t.deepEqual(partitions(database), [
      'tagd_history_samples_p20260101',
      'tagd_history_samples_p20260102',
      'tagd_history_samples_p20260103',
    ]);
    clock.advance(day + hour);
    await until(
      () => partitions(database).includes('tagd_history_samples_p20260104'),
      'the partition three days ahead',
      untilTimeoutMs,
      50, // each probe runs psql
    );
    await backend.stop();
    t.is(clock.pendingTimers(), 0, 'stop clears the upkeep timer');
  });

  test.serial('partitionDays sets the partition length, aligned to the epoch', async (t) => {
    const { database } = await open(t, { partitionDays: 7, partitionsAhead: 1 });
    // 2026-01-01 is a Thursday, like 1970-01-01: week partitions start there.
    const bounds = (server as PostgresServer).psql(
      `SELECT pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'tagd_history_samples'::regclass ORDER BY c.relname`,
      database,
    );
    t.deepEqual(partitions(database), [
      'tagd_history_samples_p20260101',
      'tagd_history_samples_p20260108',
    ]);
    t.regex(bounds, /FROM \('2026-01-01 00:00:00\+00'\) TO \('2026-01-08 00:00:00\+00'\)/);
  });

  test.serial('a sample far outside the existing partitions is kept', async (t) => {
    const { backend, database } = await open(t);
    const far = [
      good('Far/a', Date.UTC(1999, 11, 31, 23, 59, 59, 999), 1),
      good('Far/a', t0 + 1, 2),
      good('Far/a', Date.UTC(2031, 5, 15, 12), 3),
      good('Far/a', Date.UTC(2031, 5, 15, 13), 4),
      good('Far/a', Date.UTC(2100, 0, 1), 5),
    ];
    await backend.append(far);
    const read = await backend.raw({
      tagIds: ['Far/a'],
      startMs: Date.UTC(1900, 0, 1),
      stopMs: Date.UTC(2200, 0, 1),
      limit: 10,
    });
    t.deepEqual(
      read.map((s) => [s.epochMs, s.value]),
      far.map((s) => [s.epochMs, s.value]),
    );
    const names = partitions(database);
    for (const day of ['19991231', '20310615', '21000101']) {
      t.true(names.includes(`tagd_history_samples_p${day}`), day);
    }
    t.false(
      names.some((name) => name.endsWith('default')),
      'no DEFAULT partition',
    );
  });

  test.serial('retention drops whole partitions and trims the one it cuts', async (t) => {
    const { backend, database } = await open(t);
    const samples: LoggedSample[] = [];
    for (let d = -5; d <= 0; d++) {
      samples.push(
        good('Ret/a', t0 + d * day + 1000, d),
        good('Ret/a', t0 + d * day + 12 * hour, d),
      );
    }
    samples.push(good('Ret/old', t0 - 5 * day + 5, 1));
    await backend.append(samples);
    t.true(partitions(database).includes('tagd_history_samples_p20251227'));

    // Cut at 06:00 of 2025-12-30: three days go whole, the fourth loses its 00:00 sample.
    const cut = t0 - 2 * day + 6 * hour;
    t.is(await backend.deleteBefore(cut), undefined, 'rows of dropped partitions are not counted');
    const names = partitions(database);
    for (const gone of ['20251227', '20251228', '20251229']) {
      t.false(names.includes(`tagd_history_samples_p${gone}`), `${gone} dropped`);
    }
    t.true(names.includes('tagd_history_samples_p20251230'), 'the cut partition stays');
    const read = await backend.raw({
      tagIds: ['Ret/a'],
      startMs: t0 - 10 * day,
      stopMs: t0 + day,
      limit: 100,
    });
    t.deepEqual(
      read.map((s) => s.epochMs),
      samples.filter((s) => s.fullTagId === 'Ret/a' && s.epochMs >= cut).map((s) => s.epochMs),
    );
    t.deepEqual(await backend.tagIds('Ret/*'), ['Ret/a'], 'a tag with no samples left is gone');

    // A cut inside one partition only: rows are deleted and counted.
    t.is(await backend.deleteBefore(t0 - 2 * day + 13 * hour), 1);
    t.true(partitions(database).includes('tagd_history_samples_p20251230'));
  });

  test.serial('two gateways append to one database concurrently', async (t) => {
    const first = await open(t);
    const second = await open(t, { url: first.url });
    const batches = (tag: string) =>
      Array.from({ length: 20 }, (_, b) =>
        Array.from({ length: 50 }, (_, i) => good(tag, t0 + b * 1000 + i, b * 50 + i)),
      );
    await Promise.all([
      ...batches('G1/x').map((batch) => first.backend.append(batch)),
      ...batches('G2/x').map((batch) => second.backend.append(batch)),
    ]);
    const read = await first.backend.raw({
      tagIds: ['G1/x', 'G2/x'],
      startMs: t0,
      stopMs: t0 + day,
      limit: 10_000,
    });
    t.is(read.length, 2000);
    const seqs = read.map((s) => BigInt(s.seq));
    t.is(new Set(seqs).size, 2000, 'seqs are unique');
    const max = seqs.reduce((a, b) => (a > b ? a : b));
    t.is(await second.backend.lastSeq(), String(max));
    t.deepEqual(await second.backend.tagIds('**'), ['G1/x', 'G2/x']);
  });

  test.serial('password authentication; the password never shows in errors or logs', async (t) => {
    const on = secured as PostgresServer;
    t.regex(on.url, /^postgres:\/\/tagd:[^@]+@127\.0\.0\.1:\d+\/postgres$/);
    const logs = captureLogs();
    const { backend } = await open(t, { logger: logs.logger }, on);
    await backend.append([good('Pw/a', t0, 1)]);
    t.is((await backend.raw({ tagIds: ['Pw/a'], startMs: t0, stopMs: t0, limit: 1 })).length, 1);

    const wrong = on.url.replace(encodeURIComponent(password), 'wrong-secret');
    const refused = createPostgresBackend({
      url: wrong,
      logger: logs.logger,
      clock: new ManualClock(),
    });
    const error = await t.throwsAsync(refused.start(), { instanceOf: PostgresHistoryError });
    t.regex(error?.message ?? '', /password authentication failed/);
    t.regex(error?.message ?? '', /tagd:\*{8}@127\.0\.0\.1/);
    t.false(error?.message.includes('wrong-secret'));
    t.false(logs.text().includes(password) || logs.text().includes(encodeURIComponent(password)));
    t.true(logs.text().includes('tagd:********@'), 'the log names the server, masked');
  });

  test.serial(
    'a server stopped, killed and restarted: calls reject, then work again',
    async (t) => {
      const flaky = secured as PostgresServer;
      const { backend } = await open(t, {}, flaky);
      await backend.append([good('Out/a', t0, 1)]);

      await flaky.stop();
      const down = await t.throwsAsync(backend.append([good('Out/a', t0 + 1, 2)]), {
        instanceOf: PostgresHistoryError,
      });
      t.true((down as PostgresHistoryError).unreachable);
      t.regex(down?.message ?? '', /cannot reach postgres:\/\/tagd:\*{8}@127\.0\.0\.1/);
      t.false(down?.message.includes(encodeURIComponent(password)));
      await t.throwsAsync(backend.lastSeq(), { instanceOf: PostgresHistoryError });

      await flaky.start();
      await backend.append([good('Out/a', t0 + 2, 3)]);

      await flaky.kill();
      await t.throwsAsync(backend.append([good('Out/a', t0 + 3, 4)]), {
        instanceOf: PostgresHistoryError,
      });
      await flaky.start();
      await backend.append([good('Out/a', t0 + 4, 5)]);
      const read = await backend.raw({
        tagIds: ['Out/a'],
        startMs: t0,
        stopMs: t0 + 10,
        limit: 10,
      });
      t.deepEqual(
        read.map((s) => s.value),
        [1, 3, 5],
        'the refused batches are not stored; the later ones are',
      );
    },
  );
}

if (skipReason === undefined) {
  test.serial('stop lets a pending append finish; calls after stop are refused', async (t) => {
    const { backend, url } = await open(t);
    const pending = backend.append([good('Stop/a', t0, 1), good('Stop/a', t0 + 1, 2)]);
    await backend.stop();
    await pending;
    await t.throwsAsync(backend.append([good('Stop/a', t0 + 2, 3)]), { message: /not started/ });
    const again = createPostgresBackend({ url, logger, clock: new ManualClock(t0) });
    await again.start();
    t.teardown(() => again.stop());
    t.is(await again.count({ tagIds: ['Stop/a'], startMs: t0, stopMs: t0 + 10 }), 2);
  });
}

if (skipReason === undefined) {
  test.serial('a server that stops answering: calls time out, then work again', async (t) => {
    const frozen = secured as PostgresServer;
    const { backend } = await open(t, { queryTimeoutMs: 1_000, connectTimeoutMs: 1_000 }, frozen);
    await backend.append([good('Hang/a', t0, 1)]);
    frozen.freeze();
    const started = Date.now();
    const error = await t.throwsAsync(backend.append([good('Hang/a', t0 + 1, 2)]), {
      instanceOf: PostgresHistoryError,
    });
    t.true((error as PostgresHistoryError).unreachable, error?.message);
    t.true(Date.now() - started < 10_000, 'the timeouts bound the wait');
    frozen.thaw();
    await backend.append([good('Hang/a', t0 + 2, 3)]);
    const read = await backend.raw({ tagIds: ['Hang/a'], startMs: t0, stopMs: t0 + 10, limit: 10 });
    t.deepEqual(
      read.map((s) => s.value),
      [1, 3],
    );
  });
}

if (skipReason === undefined) {
  test.serial(
    'a text value holding U+0000 is stored without it (PostgreSQL text cannot hold NUL)',
    async (t) => {
      const { backend } = await open(t);
      await backend.append([
        { fullTagId: 'Nul/a', epochMs: t0, quality: 'Good', value: 'a\u0000b\u0000' },
        { fullTagId: 'Nul/a', epochMs: t0 + 1, quality: 'Good', value: 'plain' },
      ]);
      const read = await backend.raw({ tagIds: ['Nul/a'], startMs: t0, stopMs: t0 + 1, limit: 10 });
      t.deepEqual(
        read.map((s) => s.value),
        ['ab', 'plain'],
      );
    },
  );

  test.serial(
    'a sample whose partition would reach year 10000 (or start before year 1) is refused as such',
    async (t) => {
      const { backend, database } = await open(t);
      const lastDay = Date.UTC(9999, 11, 30, 12);
      await backend.append([good('Y/a', lastDay, 1)]);
      for (const epochMs of [Date.UTC(9999, 11, 31, 12), 253_402_300_800_000, Number.NaN]) {
        const error = await t.throwsAsync(
          backend.append([good('Y/a', t0, 0), good('Y/a', epochMs, 2)]),
          {
            instanceOf: PostgresHistoryError,
          },
        );
        t.false(
          (error as PostgresHistoryError).unreachable,
          'not an outage: the sample is refused',
        );
        t.is((error as PostgresHistoryError).code, '22008');
        t.regex(error?.message ?? '', /Y\/a.*cannot be stored/);
      }
      const weekly = await open(t, { partitionDays: 7 });
      const yearOne = -62_135_596_800_000 + 12 * hour; // 0001-01-01T12:00Z (Date.UTC maps year 1 to 1901)
      await t.throwsAsync(weekly.backend.append([good('Y/b', yearOne, 1)]), {
        instanceOf: PostgresHistoryError,
        message: /cannot be stored/,
      });
      await backend.append([good('Y/b', yearOne, 1)]); // day partitions start at 0001-01-01
      t.is(await backend.count({ tagIds: ['Y/b'], startMs: yearOne, stopMs: yearOne }), 1);
      const read = await backend.raw({
        tagIds: ['Y/a'],
        startMs: t0,
        stopMs: 253_402_300_800_000,
        limit: 10,
      });
      t.deepEqual(
        read.map((s) => [s.epochMs, s.value]),
        [[lastDay, 1]],
        'the refused batches stored nothing',
      );
      t.true(partitions(database).includes('tagd_history_samples_p99991230'));
    },
  );

  test.serial(
    'the history logger drops only the sample PostgreSQL cannot store and keeps logging',
    async (t) => {
      const { backend } = await open(t);
      const clock = new ManualClock(t0);
      const store = new TagStore({ clock });
      const logs = captureLogs();
      const history = new HistoryLogger({
        backend,
        store,
        entries: [{ source: '**', mode: 'onChange' }],
        retentionDays: 1_000_000,
        bufferLimit: 1_000,
        clock,
        logger: logs.logger,
      });
      await history.start();
      t.teardown(() => history.stop());
      const at = (ms: number) => new Date(ms).toISOString();
      store.write([
        ...Array.from({ length: 30 }, (_, i) => ({
          fullTagId: `Bis/t${i}`,
          utcTimestamp: at(t0 + i),
          quality: 'Good' as const,
          value: i,
        })),
        { fullTagId: 'Bis/text', utcTimestamp: at(t0), quality: 'Good', value: 'x\u0000y' },
        {
          fullTagId: 'Bis/clock',
          utcTimestamp: at(Date.UTC(9999, 11, 31, 23)),
          quality: 'Good',
          value: 1,
        },
      ]);
      await history.flush();
      t.is(history.stats().rejected, 1);
      t.is(history.stats().appended, 31);
      t.is(history.stats().buffered, 0);
      t.is(
        await backend.count({ tagIds: ['Bis/clock'], startMs: 0, stopMs: 253_402_300_799_999 }),
        0,
      );
      const text = await backend.raw({ tagIds: ['Bis/text'], startMs: t0, stopMs: t0, limit: 1 });
      t.is(text[0]?.value, 'xy');
      const line = logs.lines.find((l) => /refused 1 samples/.test(l.msg ?? ''));
      t.deepEqual(line?.tags, ['Bis/clock']);
      store.write([
        { fullTagId: 'Bis/t0', utcTimestamp: at(t0 + 100), quality: 'Good', value: 100 },
      ]);
      await history.flush();
      t.is(history.stats().appended, 32);
    },
  );
}
