/**
 * A server restart: the driver's tags turn Unavailable (Disconnected) while the server is down,
 * node-opcua reconnects on its own once it is back (same port, same certificate), the
 * subscription is recreated on the new server and values resume.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createOpcuaDriver } from '../../../drivers/opcua/index.js';
import { opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import { systemClock } from '../../../src/clock.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { TcpRelay } from '../../helpers/opcua-proxy.js';
import { OpcuaTestServer, testNodeId } from '../../helpers/opcua-server.js';
import { until } from '../../helpers/until.js';

test('a restarted server: Unavailable meanwhile, then reconnected and values resume', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-restart-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const pkiDir = join(root, 'server-pki');
  let server = await OpcuaTestServer.start({ pkiDir });
  t.teardown(() => server.stop());
  const port = server.port;

  const store = new TagStore({ clock: systemClock });
  const logs = captureLogs();
  const driver = createOpcuaDriver(
    opcuaDriverSchema.parse({
      type: 'opcua',
      name: 'Plc',
      endpointUrl: server.endpointUrl,
      publishingIntervalMs: 50,
      samplingIntervalMs: 20,
      reconnectDelayMs: 100,
      maxReconnectDelayMs: 500,
      tags: [
        { name: 'Counter', nodeId: testNodeId('Counter') },
        { name: 'Mode', nodeId: testNodeId('Mode') },
      ],
    }),
    { store, clock: systemClock, logger: logs.logger, stateDir: join(root, 'state') },
  );
  t.teardown(() => driver.stop());

  server.set('Counter', 1);
  await driver.start();
  await until(() => store.get('Plc/Counter')?.value === 1, 'the first value');
  t.is(driver.status().state, 'Running');

  await server.stop();
  await until(() => store.get('Plc/Counter')?.quality === 'Unavailable', 'Unavailable');
  t.like(store.require('Plc/Counter'), { reason: 'Disconnected' });
  t.like(store.require('Plc/Mode'), { quality: 'Unavailable', reason: 'Disconnected' });
  t.is(driver.status().state, 'Reconnecting');
  // Down for a while: several reconnection attempts fail meanwhile.
  await new Promise((resolve) => setTimeout(resolve, 600));
  t.like(store.require('Plc/Counter'), { quality: 'Unavailable' });

  server = await OpcuaTestServer.start({ pkiDir, port });
  server.set('Counter', 2);
  await until(() => store.get('Plc/Counter')?.value === 2, 'values resume after the restart');
  t.like(store.require('Plc/Mode'), { quality: 'Good', value: 'Auto' });
  await until(() => driver.status().state === 'Running', 'the driver runs again');
  server.set('Counter', 3);
  await until(() => store.get('Plc/Counter')?.value === 3, 'later changes arrive too');
  t.like(driver.status().counters, { disconnects: 1 });
});

test('a dropped connection to a running server: the session resumes and every tag is Good again', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-drop-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const server = await OpcuaTestServer.start({ pkiDir: join(root, 'server-pki') });
  t.teardown(() => server.stop());
  const relay = await TcpRelay.start(server.port);
  t.teardown(() => relay.stop());

  const store = new TagStore({ clock: systemClock });
  const driver = createOpcuaDriver(
    opcuaDriverSchema.parse({
      type: 'opcua',
      name: 'Plc',
      endpointUrl: relay.endpointUrl,
      publishingIntervalMs: 50,
      samplingIntervalMs: 20,
      reconnectDelayMs: 100,
      maxReconnectDelayMs: 500,
      tags: [
        { name: 'Counter', nodeId: testNodeId('Counter') },
        { name: 'Mode', nodeId: testNodeId('Mode') },
      ],
    }),
    {
      store,
      clock: systemClock,
      logger: captureLogs().logger,
      stateDir: join(root, 'state'),
    },
  );
  t.teardown(() => driver.stop());
  server.set('Counter', 1);
  await driver.start();
  await until(() => store.get('Plc/Mode')?.value === 'Auto', 'the first values');

  // Long enough for the server to have the first notifications acknowledged: it will not
  // republish them, so the unchanged Mode has to be read back.
  await new Promise((resolve) => setTimeout(resolve, 500));
  relay.cut();
  await until(() => store.get('Plc/Mode')?.quality === 'Unavailable', 'Unavailable');
  // Mode does not change: it must come back all the same.
  await until(() => store.get('Plc/Mode')?.quality === 'Good', 'Mode is Good again');
  t.like(store.require('Plc/Mode'), { value: 'Auto' });
  t.like(store.require('Plc/Counter'), { quality: 'Good', value: 1 });
  await until(() => driver.status().state === 'Running', 'the driver runs again');
  server.set('Counter', 2);
  await until(() => store.get('Plc/Counter')?.value === 2, 'changes arrive again');
  t.like(driver.status().counters, { disconnects: 1, reconnects: 1 });
  t.log('values read after the reconnection:', driver.status().counters?.valuesReadAfterReconnect);
});
