/**
 * Writes back from a Sparkplug host: DCMDs to a publisher with `acceptWrites`, through the tag
 * writer to a Modbus driver on a real pymodbus peer, audited with the host's topic; refused
 * commands are counted and logged (rate-limited); the next DATA carries what the device reads
 * back, not what was commanded.
 */
import test, { type ExecutionContext } from 'ava';
import { ModbusDriver } from '../../../drivers/modbus/modbus-driver.js';
import { modbusDriverSchema } from '../../../drivers/modbus/schema.js';
import { MqttPublisher } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { refusalLogIntervalMs } from '../../../src/publishers/mqtt/sparkplug-commands.js';
import { Collections } from '../../../src/tags/collections.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { TagWriter } from '../../../src/tags/tag-writer.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { ModbusPeer, pymodbusMissing } from '../../helpers/modbus-peer.js';
import { startMosquitto } from '../../helpers/mosquitto.js';
import { subscribe } from '../../helpers/mqtt-subscriber.js';
import { decodeSparkplug, scriptedHost } from '../../helpers/sparkplug-host.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

const missing = pymodbusMissing();
if (missing !== undefined) console.warn(`Sparkplug write tests skipped: ${missing}`);
const peerTest = missing === undefined ? test.serial : test.serial.skip;

async function setup(t: ExecutionContext, acceptWrites: boolean) {
  const peer = await ModbusPeer.start({ kind: 'tcp' }, { hr: [100, 7, 0, 0] });
  t.teardown(() => peer.kill());
  const broker = await startMosquitto(t);
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const audit = captureLogs();
  const stateDir = await tempDir(t);
  const driver = new ModbusDriver(
    modbusDriverSchema.parse({
      type: 'modbus',
      name: 'Dev',
      allowWrites: true,
      transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
      tags: [
        {
          name: 'Setpoint',
          table: 'holdingRegister',
          address: 0,
          type: 'int16',
          scale: 0.1,
          writable: true,
          writeMin: 0,
          writeMax: 100,
        },
        { name: 'Counter', table: 'holdingRegister', address: 1, type: 'int16' },
      ],
    }),
    { store, clock, logger: logs.logger, stateDir },
  );
  t.teardown(() => driver.stop());
  const writer = new TagWriter({
    store,
    audit: audit.logger,
    logger: logs.logger,
    now: () => clock.now(),
  });
  await driver.start();
  writer.register(driver);
  await until(() => store.get('Dev/Setpoint')?.quality === 'Good', 'the first poll');
  const collections = new Collections(store, [{ name: 'plant', members: ['Dev/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'spb',
      brokerUrl: broker.url,
      collections: ['plant'],
      format: 'sparkplugB',
      groupId: 'Plant1',
      edgeNodeId: 'gw1',
      acceptWrites,
      updateIntervalMs: 100,
    }),
    { store, collections, clock, logger: logs.logger, stateDir, writer },
  );
  t.teardown(() => publisher.stop());
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const host = await scriptedHost(t, broker.url);
  await publisher.start();
  await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DBIRTH'));
  await publisher.idle();
  const dcmd = (metrics: Parameters<typeof host.deviceCommand>[3]) =>
    host.deviceCommand('Plant1', 'gw1', 'Dev', metrics);
  const register = async (address: number) => (await peer.get('hr', address, 1))[0];
  return { peer, clock, store, logs, audit, publisher, sub, dcmd, register };
}

peerTest(
  'a DCMD to a writable tag is written through the tag writer, audited with the topic; the next DDATA carries the value read back',
  async (t) => {
    const { clock, store, audit, publisher, sub, dcmd, register } = await setup(t, true);
    t.is(store.get('Dev/Setpoint')?.value, 10);
    // 25.34 with scale 0.1 writes 253: the device holds 25.3, and that is what is published.
    await dcmd([{ name: 'Setpoint', type: 'Double', value: 25.34 }]);
    await until(
      () => audit.lines.some((line) => line.event === 'tag-write' && line.status === 'Good'),
      'the audit line',
      20_000,
    );
    t.is(await register(0), 253);
    const line = audit.lines.find((candidate) => candidate.event === 'tag-write');
    t.like(line, {
      account: 'sparkplug:spb',
      via: 'sparkplug',
      publisher: 'spb',
      topic: 'spBv1.0/Plant1/DCMD/gw1/Dev',
      fullTagId: 'Dev/Setpoint',
      requestedValue: 25.34,
      status: 'Good',
    });
    await until(() => store.get('Dev/Setpoint')?.value === 25.3, 'the read after the write');
    clock.advance(100);
    const got = await sub.waitFor((list) => decodeSparkplug(list).some((m) => m.type === 'DDATA'));
    const values = decodeSparkplug(got)
      .filter((m) => m.type === 'DDATA')
      .flatMap((m) => m.metrics.map((x) => [x.tag, x.value]));
    t.deepEqual(values, [['Dev/Setpoint', 25.3]]);
    t.like(publisher.state().sparkplug, { commandsWritten: 1, commandsRefused: 0 });
  },
);

peerTest(
  'refused DCMDs (not writable, unknown metric, out of range, wrong type, too many metrics) change nothing, are counted and logged at most once a minute',
  async (t) => {
    const { clock, logs, audit, publisher, dcmd, register } = await setup(t, true);
    await dcmd([{ name: 'Counter', type: 'Int16', value: 9 }]);
    await dcmd([{ name: 'Nope', type: 'Double', value: 1 }]);
    await dcmd([{ name: 'Setpoint', type: 'Double', value: 150 }]);
    await dcmd([{ name: 'Setpoint', type: 'Boolean', value: true }]);
    await until(() => publisher.state().sparkplug?.commandsRefused === 4, 'four refusals', 20_000);
    t.is(await register(0), 100);
    t.is(await register(1), 7);
    const refusedLines = () =>
      logs.lines.filter((line) => line.msg?.startsWith('Sparkplug write command refused'));
    t.is(refusedLines().length, 1);
    t.regex(refusedLines()[0]?.msg ?? '', /Tag Dev\/Counter is not writable/);
    // The writer audited the ones it checked, with the command's origin.
    const refusedAudit = audit.lines.filter((line) => line.status === 'Refused');
    t.deepEqual(
      refusedAudit.map((line) => [line.fullTagId, line.via]),
      [
        ['Dev/Counter', 'sparkplug'],
        ['Dev/Setpoint', 'sparkplug'],
        ['Dev/Setpoint', 'sparkplug'],
      ],
    );
    clock.advance(refusalLogIntervalMs);
    await dcmd([{ name: 'Counter', type: 'Int16', value: 9 }]);
    await until(() => refusedLines().length === 2, 'the next line a minute later', 20_000);
    t.is(refusedLines()[1]?.refusedSinceLastLine, 3);
    // More metrics than a REST request may hold: refused whole, before any check.
    await dcmd(
      Array.from({ length: 101 }, () => ({ name: 'Setpoint', type: 'Double', value: 20 })),
    );
    await until(() => publisher.state().sparkplug?.commandsRefused === 106, 'refused', 20_000);
    t.is(await register(0), 100);
    t.is(publisher.state().sparkplug?.commandsWritten, 0);
  },
);

peerTest('acceptWrites false: a DCMD to a writable tag is refused and counted', async (t) => {
  const { logs, audit, publisher, dcmd, register } = await setup(t, false);
  await dcmd([{ name: 'Setpoint', type: 'Double', value: 20 }]);
  await until(() => publisher.state().sparkplug?.commandsRefused === 1, 'the refusal', 20_000);
  t.is(await register(0), 100);
  t.regex(logs.text(), /acceptWrites is false on this publisher/);
  t.is(audit.lines.length, 0);
});
