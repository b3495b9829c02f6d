import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { NotFoundError } from '../../../src/errors.js';
import type { LicenseState } from '../../../src/license/license.js';
import { type WebhookConfig, webhookConfigSchema } from '../../../src/publishers/webhook/schema.js';
import {
  caFileUnusableReason,
  healthTagIds,
} from '../../../src/publishers/webhook/webhook-publisher.js';
import {
  autoConnectOffReason,
  WebhookPublishers,
} from '../../../src/publishers/webhook/webhook-publishers.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { makeCertificates } from '../../helpers/certificates.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

const t0 = Date.UTC(2026, 0, 1);
const server: LicenseState = {
  edition: 'server',
  licensee: 'Plant 7',
  features: new Set(['dataRelay']),
};
const enterprise: LicenseState = { edition: 'enterprise', features: new Set(['dataRelay']) };
const standard: LicenseState = { edition: 'standard', features: new Set() };
const unlicensed: LicenseState = {
  edition: 'unlicensed',
  features: new Set(),
  problem: 'License file /etc/tagd/license.json is not signed by the vendor (altered or foreign).',
};

function config(name: string, extra: Partial<WebhookConfig> = {}): WebhookConfig {
  return webhookConfigSchema.parse({
    name,
    destinationUrl: 'http://127.0.0.1:9/hook',
    collections: ['line1'],
    ...extra,
  });
}

async function setup(t: ExecutionContext, license: LicenseState = server) {
  const clock = new ManualClock(t0);
  const store = new TagStore({ clock });
  store.write([
    {
      fullTagId: 'Line1/Temp',
      utcTimestamp: new Date(t0).toISOString(),
      quality: 'Good',
      value: 20,
    },
  ]);
  const collections = new Collections(store, [
    { name: 'line1', members: ['Line1/**'] },
    { name: 'line2', members: ['Line2/**'] },
  ]);
  await collections.start();
  const logs = captureLogs();
  const current = { license };
  const manager = new WebhookPublishers({
    store,
    collections,
    clock,
    logger: logs.logger,
    license: () => current.license,
    version: '9.8.7',
  });
  t.teardown(() => manager.stopAll());
  const status = (name: string) => store.get(healthTagIds(name).status)?.value;
  return { clock, store, collections, logs, manager, current, status };
}

const messages = (logs: ReturnType<typeof captureLogs>) => logs.lines.map((line) => line.msg);

test('profile load starts Auto Connect publishers whose collections all exist', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([
    config('a'),
    config('b', { autoConnect: false }),
    config('c', { collections: ['line1', 'nope'] }),
    config('d', { collections: ['line2', 'gone', 'missing'] }),
  ]);
  t.deepEqual(
    s.manager.list().map((state) => [state.name, state.status, state.reason]),
    [
      ['a', 'On', undefined],
      ['b', 'Off', 'Auto Connect is off.'],
      ['c', 'Off', "Collection 'nope' does not exist."],
      ['d', 'Off', "Collections 'gone', 'missing' do not exist."],
    ],
  );
  t.is(autoConnectOffReason, 'Auto Connect is off.');
  t.deepEqual(
    ['a', 'b', 'c', 'd'].map((name) => s.status(name)),
    ['On', 'Off', 'Off', 'Off'],
  );
  // One line per publisher that stays Off, naming why.
  const offLines = messages(s.logs).filter((msg) => msg?.includes('stays Off'));
  t.deepEqual(offLines, [
    "Webhook publisher 'b' stays Off: Auto Connect is off.",
    "Webhook publisher 'c' stays Off: Collection 'nope' does not exist.",
    "Webhook publisher 'd' stays Off: Collections 'gone', 'missing' do not exist.",
  ]);
  t.is(s.clock.pendingTimers(), 1, 'only a runs');
});

test('a caFile that cannot be used makes the publisher Error, not running; a fixed file and Start, or a PUT, recover it', async (t) => {
  const s = await setup(t);
  const certs = await makeCertificates(t);
  const caFile = join(certs.dir, 'ca-later.pem');
  await s.manager.startAll([config('a', { caFile }), config('b', { caFile: certs.keyFile })]);
  t.deepEqual(
    s.manager.list().map((state) => [state.name, state.status, state.reason]),
    [
      ['a', 'Error', caFileUnusableReason],
      ['b', 'Error', caFileUnusableReason],
    ],
  );
  t.deepEqual([s.status('a'), s.status('b')], ['Error', 'Error'], 'the health tags flag it');
  t.is(s.clock.pendingTimers(), 0, 'neither runs');
  t.true(
    messages(s.logs).includes(
      `Webhook publisher 'a' cannot start: Cannot read the CA file ${caFile}: no such file.`,
    ),
  );
  // Start again while the file is still missing: still Error, still not running.
  t.like(await s.manager.start('a'), { status: 'Error', reason: caFileUnusableReason });
  t.is(s.clock.pendingTimers(), 0);
  // The file is put in place: Start recovers it.
  await copyFile(certs.caFile, caFile);
  t.like(await s.manager.start('a'), { status: 'On' });
  t.is(s.manager.get('a')?.reason, undefined);
  t.is(s.status('a'), 'On');
  // A replacement naming a usable file starts the one that failed (its Auto Connect is on).
  t.like(await s.manager.put(config('b', { caFile: certs.caFile })), { status: 'On' });
  t.is(s.status('b'), 'On');
  t.is(s.clock.pendingTimers(), 2);
  // Stop is Off as ever.
  t.like(await s.manager.stop('b'), { status: 'Off', reason: 'stopped' });
});

test('without the data relay feature no publisher starts, and the log says which edition', async (t) => {
  for (const [license, held] of [
    [standard, 'the license is for the standard edition'],
    [
      unlicensed,
      'no valid license is installed (License file /etc/tagd/license.json is not signed by the ' +
        'vendor (altered or foreign).)',
    ],
  ] as const) {
    const s = await setup(t, license);
    await s.manager.startAll([config('a'), config('b')]);
    const reason = `The data relay feature is not licensed: it needs the server or enterprise edition, and ${held}.`;
    t.deepEqual(
      s.manager.list().map((state) => [state.status, state.reason]),
      [
        ['Off', reason],
        ['Off', reason],
      ],
    );
    t.true(messages(s.logs).includes(`Webhook publisher 'a' stays Off: ${reason}`));
    await t.notThrowsAsync(s.manager.start('a'));
    t.is(s.manager.get('a')?.status, 'Off', 'Start over the API does not get round it');
    t.is(s.clock.pendingTimers(), 0);
  }
});

test('the enterprise edition has the data relay feature too; the license is asked at each start', async (t) => {
  const s = await setup(t, enterprise);
  await s.manager.startAll([config('a')]);
  t.is(s.manager.get('a')?.status, 'On');
  await s.manager.stop('a');
  s.current.license = standard;
  t.is((await s.manager.start('a')).status, 'Off');
  s.current.license = server;
  t.is((await s.manager.start('a')).status, 'On');
});

test('start: a missing collection keeps it Off; once the collection exists it starts', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([config('a', { collections: ['line3'] })]);
  t.deepEqual(await s.manager.start('a'), {
    name: 'a',
    status: 'Off',
    reason: "Collection 'line3' does not exist.",
    counters: { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 },
  });
  s.collections.put({ name: 'line3', members: ['Line3/**'] });
  t.is((await s.manager.start('a')).status, 'On');
  t.is((await s.manager.start('a')).status, 'On', 'idempotent');
  t.is(s.clock.pendingTimers(), 1);
});

test('stop: Off with reason "stopped"; unknown names throw NotFoundError', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([config('a')]);
  t.like(await s.manager.stop('a'), { status: 'Off', reason: 'stopped' });
  t.is(s.status('a'), 'Off');
  t.is(s.clock.pendingTimers(), 0);
  await t.throwsAsync(s.manager.start('zz'), {
    instanceOf: NotFoundError,
    message: "No webhook publisher named 'zz'.",
  });
  await t.throwsAsync(s.manager.stop('zz'), { instanceOf: NotFoundError });
  t.is(s.manager.get('zz'), undefined);
});

test('put: a new Auto Connect publisher starts at once; a new one without stays Off', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([]);
  t.like(await s.manager.put(config('a')), { name: 'a', status: 'On' });
  t.like(await s.manager.put(config('b', { autoConnect: false })), {
    status: 'Off',
    reason: 'Auto Connect is off.',
  });
  t.like(await s.manager.put(config('c', { collections: ['nope'] })), {
    status: 'Off',
    reason: "Collection 'nope' does not exist.",
  });
  t.deepEqual(
    s.manager.list().map((state) => state.name),
    ['a', 'b', 'c'],
  );
});

test('put: a running publisher keeps running with the new configuration; a stopped one stays Off', async (t) => {
  const receiver = await startReceiver(t);
  const s = await setup(t);
  await s.manager.startAll([
    config('a', { destinationUrl: receiver.url }),
    config('b', { autoConnect: false }),
  ]);
  const replaced = await s.manager.put(
    config('a', { destinationUrl: `${receiver.url}/v2`, updateIntervalSeconds: 2 }),
  );
  t.is(replaced.status, 'On');
  t.is(s.manager.config('a')?.updateIntervalSeconds, 2);
  s.clock.advance(2_000);
  await receiver.waitForRequests(1);
  t.is(receiver.requests[0]?.url, '/hook/v2');
  t.is(receiver.requests[0]?.headers['user-agent'], 'tagd/9.8.7');

  t.like(await s.manager.put(config('b', { autoConnect: true })), {
    status: 'Off',
    reason: 'Auto Connect is off.',
  });
  // A running publisher whose new configuration cannot run stops and says why.
  t.like(await s.manager.put(config('a', { collections: ['nope'] })), {
    status: 'Off',
    reason: "Collection 'nope' does not exist.",
  });
  t.is(s.manager.config('a')?.collections[0], 'nope');
});

test('remove: stops the publisher, forgets it, leaves its Status tag Off', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([config('a'), config('b')]);
  t.true(await s.manager.remove('a'));
  t.false(await s.manager.remove('a'));
  t.is(s.manager.get('a'), undefined);
  t.deepEqual(
    s.manager.list().map((state) => state.name),
    ['b'],
  );
  t.is(s.status('a'), 'Off');
  t.is(s.clock.pendingTimers(), 1);
});

test('stopAll stops every publisher; they stay listed, Off', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([config('a'), config('b')]);
  t.is(s.clock.pendingTimers(), 2);
  await s.manager.stopAll();
  t.is(s.clock.pendingTimers(), 0);
  t.deepEqual(
    s.manager.list().map((state) => state.status),
    ['Off', 'Off'],
  );
});

test('startAll again replaces the previous publishers', async (t) => {
  const s = await setup(t);
  await s.manager.startAll([config('a'), config('b')]);
  await s.manager.startAll([config('c')]);
  t.deepEqual(
    s.manager.list().map((state) => [state.name, state.status]),
    [['c', 'On']],
  );
  t.is(s.clock.pendingTimers(), 1);
});
