/**
 * The tag relay routes over real HTTP, with a real Sparkplug host driver on a Mosquitto broker
 * and a scripted edge node; and a central write through POST /api/v2/Tags/Write reaching the
 * edge as a DCMD, answered once the edge's DATA confirmed it.
 */
import test from 'ava';
import { pino } from 'pino';
import type { Driver } from '../../../drivers/driver.js';
import { sparkplugDriverSchema } from '../../../drivers/sparkplug/schema.js';
import { SparkplugDriver } from '../../../drivers/sparkplug/sparkplug-driver.js';
import { systemClock } from '../../../src/clock.js';
import type { LicenseState } from '../../../src/license/license.js';
import { DriverReports } from '../../../src/runtime/driver-reports.js';
import { RelayReports } from '../../../src/runtime/relay-reports.js';
import { TagWriter } from '../../../src/tags/tag-writer.js';
import { startApi } from '../../helpers/api-harness.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { ScriptedEdge } from '../../helpers/sparkplug-edge.js';
import { until } from '../../helpers/until.js';

/** A server license: the relay needs its data relay feature. */
const server: LicenseState = { edition: 'server', features: new Set(['dataRelay']) };

test('Relay lists the relay drivers; Relay/{driver}/Nodes every node and device seen; a write becomes a DCMD', async (t) => {
  const broker = await startMosquitto(t);
  const drivers: Driver[] = [];
  let writer: TagWriter | undefined;
  const api = await startApi(t, {
    deps: ({ store, clock, logs, audit }) => {
      const reports = new DriverReports({ drivers: () => drivers, store, clock });
      writer = new TagWriter({ store, audit, logger: logs.logger, now: () => clock.now() });
      return {
        drivers: reports,
        relay: new RelayReports({ drivers: () => drivers, reports }),
        writer,
        license: () => server,
      };
    },
  });
  const driver = new SparkplugDriver(
    sparkplugDriverSchema.parse({
      type: 'sparkplug',
      name: 'central',
      brokerUrl: broker.url,
      hostId: 'scada',
      allowWrites: true,
      writableTags: ['G/N/D/Setpoint'],
      writeConfirmTimeoutMs: 20_000,
    }),
    { store: api.store, clock: systemClock, logger: pino({ level: 'silent' }), stateDir: '/x' },
  );
  await driver.start();
  t.teardown(() => driver.stop());
  drivers.push(driver, {
    name: 'plain',
    type: 'modbus',
    start: async () => undefined,
    stop: async () => undefined,
    status: () => ({ state: 'Running', since: '2026-01-01T00:00:00.000Z', tagCount: 0 }),
  });
  // Registered before any tag exists: the writer follows the tags the births bring.
  (writer as TagWriter).register(driver);

  const edge = await ScriptedEdge.connect(t, broker.url, 'G', 'N', 4);
  await edge.nbirth([{ name: 'Speed', alias: 1, type: 'Double', value: 1 }]);
  await edge.dbirth('D', [
    { name: 'Setpoint', alias: 2, type: 'Int32', value: 5 },
    { name: 'Other', alias: 3, type: 'Int32', value: 6 },
  ]);
  const token = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  await until(() => api.store.get('central/G/N/D/Other')?.quality === 'Good', 'Other is Good');

  const list = await api.request('/api/v2/Relay', { token });
  t.is(list.status, 200);
  t.like((list.json.drivers as unknown[])[0], {
    name: 'central',
    type: 'sparkplug',
    state: 'Running',
    tagCount: 4,
    nodes: { total: 1, online: 1, stale: 0, catchingUp: 0 },
    sequenceErrors: 0,
    rebirthsRequested: 0,
  });
  t.is((list.json.drivers as unknown[]).length, 1);

  const nodes = await api.request('/api/v2/Relay/central/Nodes', { token });
  t.is(nodes.status, 200);
  t.like(nodes.json, {
    driver: 'central',
    nodes: [
      {
        groupId: 'G',
        edgeNodeId: 'N',
        online: true,
        stale: false,
        bdSeq: 4,
        sequenceErrors: 0,
        catchUp: false,
        tagCount: 4,
        devices: [{ deviceId: 'D', online: true, tagCount: 2 }],
      },
    ],
  });
  t.is((await api.request('/api/v2/Relay/plain/Nodes', { token })).status, 404);
  t.is((await api.request('/api/v2/Relay/none/Nodes', { token })).status, 404);
  const viewer = await api.signIn((await api.addUser('vera', ['Viewers'])).username);
  t.is((await api.request('/api/v2/Relay', { token: viewer })).status, 403);

  // Only the tags writableTags names may be written.
  const refused = await api.request('/api/v2/Tags/Write', {
    token,
    method: 'POST',
    body: { writes: [{ fullTagId: 'central/G/N/D/Other', value: 1 }] },
  });
  t.is(refused.status, 400);
  const written = api.request('/api/v2/Tags/Write', {
    token,
    method: 'POST',
    body: { writes: [{ fullTagId: 'central/G/N/D/Setpoint', value: 42 }] },
  });
  const command = await edge.waitForCommand((c) => c.topic === 'spBv1.0/G/DCMD/N/D');
  t.like(command.payload.metrics?.[0], { name: 'Setpoint', value: 42 });
  await edge.ddata('D', [{ alias: 2, type: 'Int32', value: 42 } as never]);
  const answer = await written;
  t.is(answer.status, 200);
  t.like(answer.json, { results: [{ fullTagId: 'central/G/N/D/Setpoint', status: 'Good' }] });
});

test('without the data relay feature the relay routes answer 403 feature-unavailable, as the publisher routes', async (t) => {
  let license: LicenseState = { edition: 'standard', features: new Set() };
  const api = await startApi(t, {
    deps: ({ store, clock }) => {
      const reports = new DriverReports({ drivers: () => [], store, clock });
      return {
        drivers: reports,
        relay: new RelayReports({ drivers: () => [], reports }),
        license: () => license,
      };
    },
  });
  const token = await api.signIn((await api.addUser('olga', ['Operators'])).username);
  for (const path of ['/api/v2/Relay', '/api/v2/Relay/central/Nodes']) {
    const refused = await api.request(path, { token });
    t.is(refused.status, 403, path);
    t.like(refused.json, {
      code: 'feature-unavailable',
      detail:
        'The tag relay needs the data relay feature of the server or enterprise edition; this installation is licensed for the standard edition.',
    });
  }
  license = server;
  const list = await api.request('/api/v2/Relay', { token });
  t.is(list.status, 200);
  t.deepEqual(list.json, { drivers: [] });
  t.is((await api.request('/api/v2/Relay/central/Nodes', { token })).status, 404);
});
