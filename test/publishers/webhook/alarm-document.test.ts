/**
 * Alarm transitions through a webhook publisher with `alarms`: a real alarm trips from a tag
 * change and the receiver gets the documented JSON document at the same URL, with the
 * publisher's headers and signature; the filter's areas match by whole-segment prefix and its
 * minPriority holds; with storeAndForward a document the receiver refused waits in the outbox.
 */
import { setTimeout as delay } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { alarmDocumentType } from '../../../src/publishers/webhook/alarm-document.js';
import { signingKey, standardWebhookSignature } from '../../../src/publishers/webhook/delivery.js';
import { type WebhookConfig, webhookConfigSchema } from '../../../src/publishers/webhook/schema.js';
import { WebhookPublisher } from '../../../src/publishers/webhook/webhook-publisher.js';
import { Collections } from '../../../src/tags/collections.js';
import { startAlarmRig } from '../../helpers/alarm-rig.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { type ReceivedRequest, startReceiver } from '../../helpers/webhook-receiver.js';

const secret = `whsec_${Buffer.from('a signing key of 24 bytes').toString('base64')}`;

async function setup(
  t: ExecutionContext,
  config: Partial<WebhookConfig>,
  receiverOptions: { down?: boolean } = {},
) {
  const receiver = await startReceiver(t, receiverOptions);
  const clock = new ManualClock();
  const rig = await startAlarmRig(t, clock);
  const collections = new Collections(rig.store, [{ name: 'hall2', members: ['Hall2/**'] }]);
  await collections.start();
  t.teardown(() => collections.stop());
  const logs = captureLogs();
  const publisher = new WebhookPublisher(
    webhookConfigSchema.parse({
      name: 'plant',
      destinationUrl: receiver.url,
      collections: ['hall2'],
      updateIntervalSeconds: 3600,
      ...config,
    }),
    {
      store: rig.store,
      collections,
      clock,
      logger: logs.logger,
      version: '1.2.3',
      stateDir: await tempDir(t),
      alarms: rig.service,
    },
  );
  t.teardown(() => publisher.stop());
  await publisher.start();
  return { receiver, clock, rig, publisher, logs };
}

type Transition = Record<string, unknown>;
const transitionsOf = (request: ReceivedRequest) =>
  (request.json as { transitions: Transition[] }).transitions;

test('a tripping alarm is POSTed at once as a signed tagd.alarm.transitions document', async (t) => {
  const { receiver, rig, clock } = await setup(t, {
    alarms: { areas: ['Hall2'] },
    signingSecret: secret,
    authentication: { mode: 'Bearer token', bearerToken: 'tok-123' },
  });
  rig.write('Hall2/Oven1/Temp', 261.5);
  const [request] = await receiver.waitForRequests(1);
  const document = request?.json as { type: string; publisher: string; transitions: Transition[] };
  t.is(document.type, alarmDocumentType);
  t.is(document.publisher, 'plant');
  t.is(document.transitions.length, 1);
  const transition = document.transitions[0] as Transition;
  t.like(transition, {
    time: clock.now(),
    utcTimestamp: new Date(clock.now()).toISOString(),
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
  t.is(typeof transition.seq, 'number');
  // The publisher's headers and Standard Webhooks signature, as its batches get.
  const headers = request?.headers ?? {};
  t.is(headers.authorization, 'Bearer tok-123');
  t.is(headers['content-type'], 'application/json');
  const id = headers['webhook-id'] as string;
  const timestamp = Number(headers['webhook-timestamp']);
  t.is(
    headers['webhook-signature'],
    standardWebhookSignature(signingKey(secret), id, timestamp, request?.text ?? ''),
  );

  // An operator's acknowledgement, with account and comment, follows as its own transition.
  rig.service.acknowledge('Oven1High', { account: 'anna', comment: 'door closed' });
  const [, second] = await receiver.waitForRequests(2);
  t.like(transitionsOf(second as ReceivedRequest)[0], {
    name: 'Oven1High',
    event: 'Acknowledged',
    from: 'Unacknowledged',
    to: 'Acknowledged',
    account: 'anna',
    comment: 'door closed',
  });
});

test('the filter: areas match whole segments as a prefix (Hall2 takes Hall2/Ovens, not Hall20), minPriority holds', async (t) => {
  const { receiver, rig } = await setup(t, { alarms: { areas: ['Hall2'], minPriority: 'Medium' } });
  rig.write('Hall20/Oven/Temp', 300); // Urgent, but area Hall20
  rig.write('Hall2/Oven1/Door', true); // Hall2/Ovens, but Low
  rig.write('Hall2/Oven1/Temp', 300); // High, Hall2/Ovens: sent
  const [request] = await receiver.waitForRequests(1);
  // Nothing else arrives: the two others were not taken.
  await delay(200);
  t.is(receiver.requests.length, 1);
  t.deepEqual(
    transitionsOf(request as ReceivedRequest).map((transition) => transition.name),
    ['Oven1High'],
  );
  t.is(rig.service.get('Hall20High')?.state, 'Unacknowledged');
});

test('without alarms in the profile no alarm document is sent', async (t) => {
  const { receiver, rig } = await setup(t, {});
  rig.write('Hall2/Oven1/Temp', 300);
  await delay(300);
  t.is(rig.service.get('Oven1High')?.state, 'Unacknowledged');
  t.is(receiver.requests.length, 0);
});

test('storeAndForward: a document the receiver refused three times is kept and sent once it answers', async (t) => {
  const { receiver, rig, clock, publisher } = await setup(t, {
    alarms: {},
    storeAndForward: true,
  });
  receiver.script(500, 500, 500);
  rig.write('Hall2/Oven1/Temp', 300);
  // The waits between attempts run on the manual clock.
  while (receiver.requests.length < 3) {
    if (clock.pendingTimers() > 1) clock.advance(1_000);
    await delay(5);
  }
  await publisher.idle();
  t.is(publisher.state().status, 'Error');
  t.is(publisher.queue().depth, 1);

  // Next tick (the receiver answers 200 now): the stored document is forwarded as it was.
  clock.advance(3_600_000);
  const requests = await receiver.waitForRequests(4);
  await publisher.idle();
  t.deepEqual(requests[3]?.json, requests[0]?.json);
  t.is(transitionsOf(requests[3] as ReceivedRequest)[0]?.name, 'Oven1High');
  t.is(publisher.state().status, 'On');
  t.is(publisher.queue().depth, 0);
});

test('without storeAndForward a refused document is dropped and counted as a failure; the alarm is unaffected', async (t) => {
  const { receiver, rig, clock, publisher } = await setup(t, { alarms: {} });
  receiver.script(503, 503, 503);
  rig.write('Hall2/Oven1/Temp', 300);
  while (receiver.requests.length < 3) {
    if (clock.pendingTimers() > 1) clock.advance(1_000);
    await delay(5);
  }
  await publisher.idle();
  t.true(
    receiver.requests.every(
      (request) => (request.json as { type?: string }).type === alarmDocumentType,
    ),
  );
  t.is(publisher.state().counters.failures, 1);
  t.is(publisher.state().lastDelivery?.error, 'HTTP 503 Service Unavailable');
  t.is(rig.service.get('Oven1High')?.state, 'Unacknowledged');
});
