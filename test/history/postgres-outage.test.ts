/**
 * The history logger over the PostgreSQL backend while the server goes away and comes back:
 * what was buffered arrives after the outage, in order, and what went beyond the buffer bound
 * is dropped (oldest first) and counted. A real server (test/helpers/postgres-server.ts); the
 * logger's flushes run on a manual clock.
 */
import test from 'ava';
import { historyConfigSchema } from '../../src/history/history-config.js';
import { HistoryLogger } from '../../src/history/history-logger.js';
import { HistoryService } from '../../src/history/history-service.js';
import { createPostgresBackend } from '../../src/history/postgres-backend.js';
import type { Sample } from '../../src/tags/sample.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  type PostgresServer,
  postgresSkipReason,
  startPostgresServer,
} from '../helpers/postgres-server.js';

const t0 = Date.UTC(2026, 0, 1);
const skipReason = postgresSkipReason();
let server: PostgresServer | undefined;

test.before(async () => {
  if (skipReason === undefined) server = await startPostgresServer({ password: 'outage-secret' });
});
test.after.always(async () => {
  await server?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

if (skipReason !== undefined) {
  test(`postgres history outage (skipped: ${skipReason})`, (t) => t.pass());
} else {
  test.serial(
    'buffered samples arrive after a postgres outage; drops beyond the bound are counted',
    async (t) => {
      const pg = server as PostgresServer;
      const clock = new ManualClock(t0);
      const logs = captureLogs();
      const store = new TagStore({ clock });
      const backend = createPostgresBackend({
        url: await pg.createDatabase(),
        logger: logs.logger,
        clock,
      });
      await backend.start();
      const history = new HistoryLogger({
        backend,
        store,
        entries: [{ source: 'Line1/**', mode: 'onChange' }],
        retentionDays: 30,
        bufferLimit: 1_000,
        clock,
        logger: logs.logger,
      });
      await history.start();
      t.teardown(async () => {
        await history.stop();
        await backend.stop();
      });
      let value = 0;
      const write = (count: number) => {
        // Sample times are their own (1 ms apart): the clock moves only to run flushes.
        for (let i = 0; i < count; i++) {
          const sample: Sample = {
            fullTagId: 'Line1/a',
            utcTimestamp: new Date(t0 + value + 1).toISOString(),
            quality: 'Good',
            value: ++value,
          };
          store.write([sample]);
        }
      };
      /** Ticks the flush timer (real waits in between, for the network) until `done`. */
      const flushUntil = async (done: () => boolean, what: string) => {
        for (let i = 0; i < 300 && !done(); i++) {
          clock.advance(1_000);
          await sleep(20);
        }
        t.true(done(), what);
      };

      write(100);
      await flushUntil(() => history.stats().appended === 100, 'the first 100 are stored');

      await pg.stop();
      write(600);
      await flushUntil(() => history.stats().failedAppends > 0, 'an append fails while down');
      write(600); // 1,200 waiting, bound 1,000: the oldest 200 go
      t.is(history.stats().dropped, 200);
      t.is(history.stats().buffered, 1_000);

      await pg.start();
      await flushUntil(
        () => history.stats().appended === 1_100,
        'the buffer drains after the outage',
      );
      t.is(history.stats().buffered, 0);

      const read = await backend.raw({
        tagIds: ['Line1/a'],
        startMs: t0,
        stopMs: t0 + 86_400_000,
        limit: 10_000,
      });
      const expected = [
        ...Array.from({ length: 100 }, (_, i) => i + 1),
        ...Array.from({ length: 1_000 }, (_, i) => 301 + i),
      ];
      t.deepEqual(
        read.map((s) => s.value),
        expected,
        'everything but the 200 oldest of the outage, in order',
      );
      t.true(logs.lines.some((line) => /200 samples were dropped/.test(line.msg ?? '')));
      t.false(logs.text().includes('outage-secret'), 'the password is not logged');
    },
  );

  test.serial(
    'a server that is down when history starts: the daemon goes on, samples wait and arrive',
    async (t) => {
      const pg = server as PostgresServer;
      const url = await pg.createDatabase();
      const clock = new ManualClock(t0);
      const logs = captureLogs();
      const store = new TagStore({ clock });
      await pg.stop();
      const history = new HistoryService({
        backend: createPostgresBackend({
          url,
          logger: logs.logger,
          clock,
          connectTimeoutMs: 2_000,
        }),
        store,
        config: historyConfigSchema.parse({
          backend: 'postgres',
          url,
          log: [{ source: 'Line1/**', mode: 'onChange' }],
        }),
        clock,
        logger: logs.logger,
      });
      try {
        await history.start();
        t.teardown(() => history.stop());
        t.true(
          logs.lines.some((line) => /history backend unreachable at start/.test(line.msg ?? '')),
          'the log says history is not there yet',
        );
        for (let i = 1; i <= 5; i++) {
          store.write([
            {
              fullTagId: 'Line1/b',
              utcTimestamp: new Date(t0 + i).toISOString(),
              quality: 'Good',
              value: i,
            },
          ]);
        }
        clock.advance(1_000);
        for (let i = 0; i < 300 && history.stats().failedAppends === 0; i++) await sleep(20);
        t.is(history.stats().buffered, 5, 'kept while the server is down');
      } finally {
        await pg.start();
      }
      for (let i = 0; i < 300 && history.stats().appended < 5; i++) {
        clock.advance(1_000);
        await sleep(20);
      }
      t.is(history.stats().appended, 5);
      const read = await history.raw({
        tagIds: ['Line1/b'],
        startMs: t0,
        stopMs: t0 + 1_000,
        limit: 100,
      });
      t.deepEqual(
        read.map((sample) => sample.value),
        [1, 2, 3, 4, 5],
      );
      t.false(logs.text().includes('outage-secret'), 'the password is not logged');
    },
  );
}
