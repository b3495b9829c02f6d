/**
 * Alarm transitions through an MQTT publisher with `alarms`, against a real Mosquitto: json
 * formats on `<topicPrefix>/alarms/<name>` (the publisher's QoS and retain, through the outbox),
 * Sparkplug B as node metrics in the NBIRTH and NDATA. A real alarm trips from a tag change.
 */
import test, { type ExecutionContext } from 'ava';
import type { AlarmFilter } from '../../../src/alarms/alarm-filter.js';
import { alarmDefinitionSchema } from '../../../src/alarms/alarm-schema.js';
import { MqttPublisher, mqttHealthTagIds } from '../../../src/publishers/mqtt/mqtt-publisher.js';
import { mqttConfigSchema } from '../../../src/publishers/mqtt/schema.js';
import { decode } from '../../../src/publishers/mqtt/sparkplug-payloads.js';
import { Collections } from '../../../src/tags/collections.js';
import { startAlarmRig } from '../../helpers/alarm-rig.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { type Mosquitto, startMosquitto } from '../../helpers/mosquitto.js';
import { type ReceivedMessage, subscribe } from '../../helpers/mqtt-subscriber.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function setup(
  t: ExecutionContext,
  broker: Mosquitto,
  config: Record<string, unknown> & { alarms?: AlarmFilter },
) {
  const clock = new ManualClock();
  const rig = await startAlarmRig(t, clock);
  const collections = new Collections(rig.store, [{ name: 'hall2', members: ['Hall2/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const publisher = new MqttPublisher(
    mqttConfigSchema.parse({
      name: 'mq',
      brokerUrl: broker.url,
      collections: ['hall2'],
      topicPrefix: 'plant',
      updateIntervalMs: 3_600_000,
      ...config,
    }),
    {
      store: rig.store,
      collections,
      clock,
      logger: logs.logger,
      stateDir: await tempDir(t),
      alarms: rig.service,
    },
  );
  t.teardown(() => publisher.stop());
  const statusId = mqttHealthTagIds('mq').status;
  const on = new Promise<void>((resolve) => {
    const off = rig.store.subscribe((updates) => {
      if (updates.some((u) => u.sample.fullTagId === statusId && u.sample.value === 'On')) {
        off();
        resolve();
      }
    });
  });
  await publisher.start();
  await on;
  return { clock, rig, publisher, logs };
}

const json = (message: ReceivedMessage | undefined) =>
  JSON.parse(message?.payload.toString('utf8') ?? 'null') as Record<string, unknown>;

test('json: a tripping alarm is published on <topicPrefix>/alarms/<name>, QoS 1, not retained; the filter holds', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'plant/alarms/#');
  const { rig, clock } = await setup(t, broker, { alarms: { areas: ['Hall2'] } });
  rig.write('Hall20/Oven/Temp', 300); // area Hall20: not taken
  rig.write('Hall2/Oven1/Temp', 261.5);
  const [message] = await sub.waitForCount(1);
  t.is(message?.topic, 'plant/alarms/Oven1High');
  t.is(message?.qos, 1);
  t.false(message?.retain);
  t.like(json(message), {
    time: clock.now(),
    name: 'Oven1High',
    area: 'Hall2/Ovens',
    priority: 'High',
    severity: 750,
    event: 'Activated',
    from: 'Normal',
    to: 'Unacknowledged',
    active: true,
    acknowledged: false,
    value: 261.5,
    limit: 250,
    message: 'Oven 1 above 250 °C: 261.5 °C',
  });
  rig.service.acknowledge('Oven1High', { account: 'anna', comment: 'seen' });
  const messages = await sub.waitForCount(2);
  t.like(json(messages[1]), { event: 'Acknowledged', account: 'anna', comment: 'seen' });
  t.deepEqual(
    messages.map((m) => m.topic),
    ['plant/alarms/Oven1High', 'plant/alarms/Oven1High'],
  );
});

test('json-per-tag (retained): a subscriber arriving later gets each alarm’s last transition', async (t) => {
  const broker = await startMosquitto(t);
  const { rig } = await setup(t, broker, {
    format: 'json-per-tag',
    alarms: { minPriority: 'High' },
  });
  rig.write('Hall2/Oven1/Door', true); // Low: not taken
  rig.write('Hall2/Oven1/Temp', 300);
  rig.write('Hall20/Oven/Temp', 300);
  const early = await subscribe(t, broker.url, 'plant/alarms/#');
  await early.waitForCount(2);
  const late = await subscribe(t, broker.url, 'plant/alarms/#');
  const retained = await late.waitForCount(2);
  t.true(retained.every((m) => m.retain));
  t.deepEqual(retained.map((m) => m.topic).sort(), [
    'plant/alarms/Hall20High',
    'plant/alarms/Oven1High',
  ]);
});

test('json: a transition while the broker is away waits in the outbox and arrives after it returns', async (t) => {
  const broker = await startMosquitto(t);
  const { rig, clock, publisher } = await setup(t, broker, { alarms: {} });
  await broker.kill();
  rig.write('Hall2/Oven1/Temp', 300);
  t.is(publisher.state().queueDepth, 1);
  await broker.restart();
  const sub = await subscribe(t, broker.url, 'plant/alarms/#');
  // Reconnection waits run on the publisher's clock.
  const arrived = sub.waitForCount(1);
  const timer = setInterval(() => clock.advance(1_000), 20);
  try {
    const [message] = await arrived;
    t.like(json(message), { name: 'Oven1High', event: 'Activated' });
  } finally {
    clearInterval(timer);
  }
  t.is(rig.service.get('Oven1High')?.state, 'Unacknowledged');
});

function metricsOf(message: ReceivedMessage | undefined) {
  const decoded = decode(message?.payload ?? Buffer.alloc(0));
  const num = (value: unknown) =>
    typeof value === 'object' && value !== null && 'low' in value
      ? (value as unknown as { toNumber(): number }).toNumber()
      : value;
  return {
    seq: num(decoded.seq) as number,
    metrics: (decoded.metrics ?? []).map((metric) => ({
      name: metric.name ?? undefined,
      alias: num(metric.alias) as number,
      type: metric.type,
      value: num(metric.value),
    })),
  };
}

test('sparkplugB: alarm states are node metrics in the NBIRTH and, at a transition, in an NDATA', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/#');
  const { rig } = await setup(t, broker, {
    format: 'sparkplugB',
    groupId: 'Plant1',
    edgeNodeId: 'gw1',
    alarms: { areas: ['Hall2'] },
  });
  const births = await sub.waitFor((list) => list.some((m) => m.topic.includes('/NBIRTH/')));
  const nbirth = metricsOf(births.find((m) => m.topic === 'spBv1.0/Plant1/NBIRTH/gw1'));
  const alarmMetrics = nbirth.metrics.filter((m) => m.name?.startsWith('Alarms/'));
  t.deepEqual(
    alarmMetrics.map((m) => [m.name, m.type, m.value]),
    [
      ['Alarms/Oven1High/State', 'String', 'Normal'],
      ['Alarms/Oven1High/Active', 'Boolean', false],
      ['Alarms/Oven1High/Acknowledged', 'Boolean', true],
      ['Alarms/Oven1Door/State', 'String', 'Normal'],
      ['Alarms/Oven1Door/Active', 'Boolean', false],
      ['Alarms/Oven1Door/Acknowledged', 'Boolean', true],
    ],
  );
  const before = sub.messages.length;
  rig.write('Hall20/Oven/Temp', 300); // not taken
  rig.write('Hall2/Oven1/Temp', 300);
  const all = await sub.waitFor((list) =>
    list.slice(before).some((m) => m.topic === 'spBv1.0/Plant1/NDATA/gw1'),
  );
  const ndataMessages = all.slice(before).filter((m) => m.topic === 'spBv1.0/Plant1/NDATA/gw1');
  t.is(ndataMessages.length, 1);
  const ndata = metricsOf(ndataMessages[0]);
  const alias = (name: string) => alarmMetrics.find((m) => m.name === name)?.alias;
  t.deepEqual(
    ndata.metrics.map((m) => [m.alias, m.value]),
    [
      [alias('Alarms/Oven1High/State'), 'Unacknowledged'],
      [alias('Alarms/Oven1High/Active'), true],
      [alias('Alarms/Oven1High/Acknowledged'), false],
    ],
  );
  t.true(ndata.seq > 0);
});

test('sparkplugB: an alarm added later (not in the NBIRTH) is announced by new births with its state', async (t) => {
  const broker = await startMosquitto(t);
  const sub = await subscribe(t, broker.url, 'spBv1.0/Plant1/NBIRTH/#');
  const { rig } = await setup(t, broker, {
    format: 'sparkplugB',
    groupId: 'Plant1',
    edgeNodeId: 'gw1',
    alarms: { areas: ['Hall2'] },
  });
  await sub.waitForCount(1);
  rig.service.apply([
    ...rig.service.definitions(),
    alarmDefinitionSchema.parse({
      name: 'Oven1Cold',
      source: 'Hall2/Oven1/Temp',
      condition: 'Low',
      limit: 250,
      priority: 'Medium',
      area: 'Hall2/Ovens',
    }),
  ]);
  const births = await sub.waitForCount(2);
  const names = (message: ReceivedMessage | undefined) =>
    metricsOf(message).metrics.map((m) => [m.name, m.value]);
  t.false(names(births[0]).some(([name]) => name === 'Alarms/Oven1Cold/State'));
  t.deepEqual(
    names(births[1]).filter(([name]) => String(name).startsWith('Alarms/Oven1Cold/')),
    [
      ['Alarms/Oven1Cold/State', 'Unacknowledged'],
      ['Alarms/Oven1Cold/Active', true],
      ['Alarms/Oven1Cold/Acknowledged', false],
    ],
  );
});
