/**
 * The contract every driver's tests run (libp2p-style compliance suite): start and stop are
 * idempotent, values arrive as Good samples, a lost connection turns tags Unavailable, and stop
 * releases timers and sockets and leaves the tags Unavailable.
 */
import type { TestFn } from 'ava';
import type { Driver } from '../../drivers/driver.js';
import type { TagStore } from '../../src/tags/tag-store.js';
import type { ManualClock } from '../helpers/manual-clock.js';

/** One driver under test, built fresh for each contract test. */
export interface DriverUnderTest {
  driver: Driver;
  store: TagStore;
  /** Every tag the driver is configured with. */
  tagIds: string[];
  /** Makes the next values arrive (advance a manual clock, wait for a poll). */
  produce(): Promise<void>;
  /** The manual clock the driver runs on, if any: its timers must be gone after stop. */
  clock?: ManualClock;
  /** Cuts the driver off its peer (kill the server, close the port). */
  disconnect?(): Promise<void>;
  /** Releases the peer and anything else set up. */
  teardown?(): Promise<void>;
}

/** How to build the driver under test. */
export interface DriverContractOptions {
  /** Driver type, used in test titles. */
  type: string;
  /**
   * Whether the driver talks to a peer it can lose. When true, `setup` must return
   * `disconnect` and the lost-connection test runs; the simulator has no peer.
   */
  hasPeer: boolean;
  setup(): Promise<DriverUnderTest>;
}

/** Registers the contract tests for one driver type. */
export function driverContract(test: TestFn, options: DriverContractOptions): void {
  const title = (what: string) => `${options.type} driver contract: ${what}`;
  // Serial: the resource counts below are process-wide.
  const serial = test.serial;

  const withDriver = (run: (subject: DriverUnderTest) => Promise<void>) => async () => {
    const subject = await options.setup();
    try {
      await run(subject);
    } finally {
      await subject.driver.stop();
      await subject.teardown?.();
    }
  };

  serial(title('start and stop are idempotent'), async (t) => {
    await withDriver(async ({ driver }) => {
      t.is(driver.status().state, 'Stopped');
      await driver.start();
      await driver.start();
      t.not(driver.status().state, 'Stopped');
      await driver.stop();
      await driver.stop();
      t.is(driver.status().state, 'Stopped');
      await driver.start();
      t.not(driver.status().state, 'Stopped', 'a stopped driver starts again');
    })();
  });

  serial(title('declares its tags on start and values arrive as Good samples'), async (t) => {
    await withDriver(async ({ driver, store, tagIds, produce }) => {
      t.true(tagIds.length > 0);
      await driver.start();
      for (const id of tagIds) t.true(store.has(id), `${id} is declared`);
      t.is(driver.status().tagCount, tagIds.length);
      await produce();
      for (const id of tagIds) {
        const sample = store.require(id);
        t.is(sample.quality, 'Good', id);
        t.not(sample.value, undefined, id);
        t.false(Number.isNaN(Date.parse(sample.utcTimestamp)), id);
      }
    })();
  });

  serial(title('stop releases timers and sockets and leaves tags Unavailable'), async (t) => {
    const before = countResources();
    await withDriver(async ({ driver, store, tagIds, produce, clock }) => {
      await driver.start();
      await produce();
      await driver.stop();
      for (const id of tagIds) {
        const sample = store.require(id);
        t.is(sample.quality, 'Unavailable', id);
        t.is(sample.value, undefined, id);
      }
      if (clock) t.is(clock.pendingTimers(), 0, 'no timer left on the clock');
    })();
    // Let closed handles be collected before counting.
    await new Promise((resolve) => setImmediate(resolve));
    const after = countResources();
    t.true(after.timers <= before.timers, `timers: ${before.timers} before, ${after.timers} after`);
    t.true(
      after.sockets <= before.sockets,
      `sockets: ${before.sockets} before, ${after.sockets} after`,
    );
  });

  if (!options.hasPeer) return;
  serial(title('a lost connection turns its tags Unavailable'), async (t) => {
    await withDriver(async (subject) => {
      if (subject.disconnect === undefined)
        return t.fail('hasPeer drivers must provide disconnect');
      await subject.driver.start();
      await subject.produce();
      await subject.disconnect();
      await subject.produce();
      for (const id of subject.tagIds) {
        const sample = subject.store.require(id);
        t.is(sample.quality, 'Unavailable', id);
        t.is(sample.reason, 'Disconnected', id);
      }
    })();
  });
}

function countResources(): { timers: number; sockets: number } {
  const resources = process.getActiveResourcesInfo();
  return {
    timers: resources.filter((name) => name === 'Timeout').length,
    sockets: resources.filter((name) => /TCP|Pipe|UDP/.test(name)).length,
  };
}
