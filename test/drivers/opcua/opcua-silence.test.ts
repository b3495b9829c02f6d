/**
 * A server that stops publishing, against a real node-opcua server: publishing disabled, the
 * subscription ended (BadTimeout) or dropped without a word, Publish requests never answered,
 * the whole server hung. In every case the tags turn Stale (NoUpdate) within the subscription's
 * silence bound, the driver re-creates the subscription (or the connection), and the tags are
 * Good again only from fresh notifications: the server's Counter moves from 12 to 132 during
 * the fault, and 132 is what the tag shows afterwards.
 *
 * The driver's timing runs on a manual clock (the server's on real time): with
 * `keepAliveIntervalMs` 1000 and `publishingIntervalMs` 50 the server owes a message every
 * 1000 ms, and its CurrentTime heartbeat is sampled every 1000 ms, so the bound is
 * 1000 + 50 + 2000 = 3050 ms. The last test runs the hang on real time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { DriverDeps } from '../../../drivers/driver.js';
import { createOpcuaDriver } from '../../../drivers/opcua/index.js';
import type { OpcuaDriver } from '../../../drivers/opcua/opcua-driver.js';
import { opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import { type Clock, systemClock } from '../../../src/clock.js';
import type { Sample } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { TcpRelay } from '../../helpers/opcua-proxy.js';
import { OpcuaTestServer, testNodeId } from '../../helpers/opcua-server.js';
import { until } from '../../helpers/until.js';

/** One folder for the whole file: the server's certificate is made once. */
const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-silence-'));
const serverPki = join(root, 'server-pki');
test.after.always(() => rm(root, { recursive: true, force: true }));

/** The silence bound of the subscriptions below, ms (see the file comment). */
const boundMs = 3050;

interface Subject {
  server: OpcuaTestServer;
  driver: OpcuaDriver;
  store: TagStore;
  logs: ReturnType<typeof captureLogs>;
  /** Every sample of Plc/Counter written, in order. */
  history: Sample[];
  counters: () => Record<string, number | undefined>;
}

async function start(
  t: ExecutionContext,
  clock: Clock,
  options: { relay?: boolean } = {},
): Promise<Subject & { relay: TcpRelay | undefined }> {
  const server = await OpcuaTestServer.start({ pkiDir: serverPki });
  t.teardown(() => server.stop());
  const relay = options.relay ? await TcpRelay.start(server.port) : undefined;
  if (relay) t.teardown(() => relay.stop());
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const deps: DriverDeps = {
    store,
    clock,
    logger: logs.logger,
    stateDir: join(root, `state-${Math.random().toString(36).slice(2)}`),
  };
  const driver = createOpcuaDriver(
    opcuaDriverSchema.parse({
      type: 'opcua',
      name: 'Plc',
      endpointUrl: relay?.endpointUrl ?? server.endpointUrl,
      publishingIntervalMs: 50,
      samplingIntervalMs: 20,
      keepAliveIntervalMs: 1000,
      reconnectDelayMs: 100,
      tags: [
        { name: 'Counter', nodeId: testNodeId('Counter') },
        { name: 'Mode', nodeId: testNodeId('Mode') },
      ],
    }),
    deps,
  ) as OpcuaDriver;
  t.teardown(() => driver.stop());
  const history: Sample[] = [];
  store.subscribe((updates) => {
    for (const { sample } of updates) if (sample.fullTagId === 'Plc/Counter') history.push(sample);
  });
  server.set('Counter', 12);
  await driver.start();
  await until(() => store.get('Plc/Counter')?.value === 12, 'the first value');
  await until(() => driver.status().state === 'Running', 'the driver runs');
  const counters = () => driver.status().counters ?? {};
  return { server, relay, driver, store, logs, history, counters };
}

const counter = (store: TagStore) => store.require('Plc/Counter');

/** Warnings logged about a silent subscription. */
const silenceWarnings = (subject: Subject) =>
  subject.logs.lines.filter(
    (line) => line.level === 40 && /OPC UA subscription silent/.test(line.msg ?? ''),
  );

/** The tag shows 132 again, Good, and nothing Good came between the fault and that value. */
function freshAfter(t: ExecutionContext, subject: Subject, faultAt: number): void {
  const after = subject.history.slice(faultAt);
  const firstGood = after.findIndex((sample) => sample.quality === 'Good');
  t.true(firstGood > 0, 'not Good at once');
  t.like(after[firstGood], { quality: 'Good', value: 132 });
  t.false(
    after.slice(0, firstGood).some((sample) => sample.quality === 'Good'),
    'no Good 12 between the fault and the fresh value',
  );
}

test.serial('a quiet, healthy subscription stays Good bound after bound', async (t) => {
  const clock = new ManualClock();
  const { store, counters } = await start(t, clock);
  // Counter does not change: only the heartbeat (and keep-alives) come, about once a second.
  for (let second = 0; second < 5; second++) {
    const seen = counters().heartbeats ?? 0;
    await until(() => (counters().heartbeats ?? 0) > seen, 'a heartbeat');
    clock.advance(1000);
  }
  t.like(counter(store), { quality: 'Good', value: 12 });
  t.like(counters(), { silentSubscriptions: 0, resubscriptions: 0 });
});

test.serial(
  'publishing disabled: keep-alives go on, yet the tags turn Stale at the bound, then fresh values after the subscription is re-created',
  async (t) => {
    const clock = new ManualClock();
    const subject = await start(t, clock);
    const { server, driver, store, counters } = subject;
    // The heartbeat has shown that the subscription publishes: keep-alives alone no longer do.
    await until(() => (counters().heartbeats ?? 0) >= 1, 'a heartbeat change');
    server.setPublishing(false);
    server.set('Counter', 132);
    const faultAt = subject.history.length;
    // A keep-alive per window goes on: none of them may put the bound off.
    for (let window = 0; window < 3; window++) {
      const seen = counters().keepAlives ?? 0;
      await until(() => (counters().keepAlives ?? 0) > seen, 'a keep-alive');
      clock.advance(1000);
    }
    clock.advance(boundMs - 3000 - 1);
    t.like(counter(store), { quality: 'Good', value: 12 }, 'Good until the bound');
    clock.advance(1);
    t.like(counter(store), { quality: 'Stale', reason: 'NoUpdate', value: 12 });
    t.regex(counter(store).message ?? '', /No message on the subscription for 3050 ms/);
    t.like(store.require('Plc/Mode'), { quality: 'Stale', reason: 'NoUpdate', value: 'Auto' });
    t.is(driver.status().state, 'Reconnecting');
    await until(() => counter(store).quality === 'Good', 'Good again');
    freshAfter(t, subject, faultAt);
    t.like(store.require('Plc/Mode'), { quality: 'Good', value: 'Auto' });
    await until(() => driver.status().state === 'Running', 'Running again');
    t.like(counters(), { silentSubscriptions: 1, resubscriptions: 1, disconnects: 0 });
    t.is(silenceWarnings(subject).length, 1, 'one warning');
  },
);

test.serial(
  'the server ends the subscription (BadTimeout): Stale at once, re-created, fresh values',
  async (t) => {
    const subject = await start(t, new ManualClock());
    const { server, store, counters } = subject;
    const faultAt = subject.history.length;
    server.expireSubscriptions();
    await until(() => counter(store).quality === 'Stale', 'Stale');
    t.like(counter(store), { reason: 'NoUpdate', value: 12 });
    t.regex(counter(store).message ?? '', /The server ended the subscription \(BadTimeout\)/);
    server.set('Counter', 132);
    await until(() => counter(store).value === 132, 'the fresh value');
    freshAfter(t, subject, faultAt);
    t.like(counters(), { silentSubscriptions: 1, resubscriptions: 1 });
    t.is(server.subscriptionCount(), 1, 'the re-created one');
  },
);

test.serial(
  'the server drops the subscription without a word: Stale at the bound, re-created, fresh values',
  async (t) => {
    const clock = new ManualClock();
    const subject = await start(t, clock);
    const { server, store, counters } = subject;
    const faultAt = subject.history.length;
    server.dropSubscriptions();
    server.set('Counter', 132);
    clock.advance(boundMs - 1);
    t.like(counter(store), { quality: 'Good', value: 12 });
    clock.advance(1);
    t.like(counter(store), { quality: 'Stale', reason: 'NoUpdate', value: 12 });
    await until(() => counter(store).value === 132, 'the fresh value');
    freshAfter(t, subject, faultAt);
    t.like(counters(), { silentSubscriptions: 1, resubscriptions: 1 });
  },
);

test.serial(
  'Publish never answered: Stale at the bound; the re-created subscription stays silent, so the connection is made anew, again and again; values return once the server answers',
  async (t) => {
    const clock = new ManualClock();
    const subject = await start(t, clock);
    const { server, driver, store, logs, counters } = subject;
    const created = (replacement: boolean) =>
      logs.lines.filter(
        (line) =>
          line.msg === 'OPC UA subscription created' && Boolean(line.replacement) === replacement,
      ).length;
    const faultAt = subject.history.length;
    server.answerPublish(false);
    server.set('Counter', 132);
    for (let round = 1; round <= 2; round++) {
      const firsts = created(false);
      if (round > 1) {
        // The new session subscribes, and the server never publishes on it either.
        clock.advance(100);
        await until(() => created(false) > firsts, 'a new session subscribes');
      }
      clock.advance(boundMs);
      t.like(counter(store), { quality: round === 1 ? 'Stale' : 'Unavailable' });
      await until(() => created(true) === round, 'the subscription is re-created');
      t.not(counter(store).quality, 'Good', 'the re-created one has brought nothing');
      clock.advance(boundMs);
      t.like(counter(store), { quality: 'Unavailable', reason: 'Disconnected' });
      t.regex(counter(store).message ?? '', /after it had been re-created\. Connecting again\./);
      t.is(driver.status().state, 'Reconnecting');
      t.like(counters(), {
        silentSubscriptions: 2 * round,
        resubscriptions: round,
        disconnects: round,
      });
    }
    t.is(silenceWarnings(subject).length, 1, 'one warning for the outage');
    server.answerPublish(true);
    clock.advance(100);
    await until(() => counter(store).value === 132, 'the fresh value');
    freshAfter(t, subject, faultAt);
    await until(() => driver.status().state === 'Running', 'Running again');
    t.is(silenceWarnings(subject).length, 1, 'still one warning');
    await until(() => server.subscriptionCount() === 1, 'the given-up sessions closed');
    await driver.stop();
    t.is(clock.pendingTimers(), 0, 'stop leaves no timer');
  },
);

test.serial(
  'a hung server: Stale at the bound, Unavailable one bound later when re-creating the subscription gets no answer, values once it answers again',
  async (t) => {
    const clock = new ManualClock();
    const subject = await start(t, clock, { relay: true });
    const { relay, driver, store, counters } = subject;
    const faultAt = subject.history.length;
    relay?.hang();
    subject.server.set('Counter', 132);
    clock.advance(boundMs - 1);
    t.like(counter(store), { quality: 'Good', value: 12 });
    clock.advance(1);
    t.like(counter(store), { quality: 'Stale', reason: 'NoUpdate', value: 12 });
    clock.advance(boundMs - 1);
    t.like(counter(store), { quality: 'Stale' });
    clock.advance(1);
    t.like(counter(store), { quality: 'Unavailable', reason: 'Disconnected' });
    t.regex(
      counter(store).message ?? '',
      /re-creating it failed: the server did not complete it within 3050 ms/,
    );
    t.is(driver.status().state, 'Reconnecting');
    t.like(counters(), { silentSubscriptions: 1, disconnects: 1 });
    relay?.resume();
    clock.advance(100);
    await until(() => counter(store).value === 132, 'the fresh value');
    freshAfter(t, subject, faultAt);
  },
);

test.serial(
  'a hung server on real time: not Good past the bound, Unavailable past twice the bound, stop leaves nothing behind',
  async (t) => {
    const subject = await start(t, systemClock, { relay: true });
    const { relay, driver, store } = subject;
    const hungAt = Date.now();
    relay?.hang();
    // Generous room over the stated bounds (3050 and 6100 ms): a busy machine is slow to run
    // the timers, never early (a message just before the hang only makes them sooner).
    const slackMs = 5000;
    await until(() => counter(store).quality !== 'Good', 'not Good', boundMs + slackMs);
    const staleAfter = Date.now() - hungAt;
    t.like(counter(store), { quality: 'Stale', reason: 'NoUpdate' });
    await until(
      () => counter(store).quality === 'Unavailable',
      'Unavailable',
      2 * boundMs + slackMs - staleAfter,
    );
    const unavailableAfter = Date.now() - hungAt;
    t.log(`Stale after ${staleAfter} ms, Unavailable after ${unavailableAfter} ms`);
    t.true(staleAfter >= boundMs - 1100, 'not before the last message + the bound');
    t.true(unavailableAfter - staleAfter >= boundMs - 50, 'one bound for the re-creation');
    relay?.resume();
    await until(() => counter(store).quality === 'Good', 'Good again');
    const before = Date.now();
    await driver.stop();
    t.true(Date.now() - before < 5000, 'stop does not wait for the server');
  },
);
