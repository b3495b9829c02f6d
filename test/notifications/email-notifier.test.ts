/**
 * Alarm e-mail against a real SMTP server (aiosmtpd on loopback): a real alarm trips from a tag
 * change; rules filter, delay and consolidate on an injected clock (one real-time test);
 * an SMTP server that refuses the login or is down turns the notifier Error with the reason
 * (never the password), retries with backoff, and leaves the alarms alone.
 */
import { setTimeout as delay } from 'node:timers/promises';
import test, { type ExecutionContext } from 'ava';
import { type Clock, systemClock } from '../../src/clock.js';
import {
  EmailNotifier,
  emailHealthTagIds,
  retryWaitsMs,
  sendAttempts,
} from '../../src/notifications/email-notifier.js';
import {
  type NotificationsConfig,
  notificationsSchema,
} from '../../src/notifications/notifications-schema.js';
import { startAlarmRig } from '../helpers/alarm-rig.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { startSmtpServer } from '../helpers/smtp-server.js';
import { until } from '../helpers/until.js';

const password = 'Sup3r-s3cret-pw';

function settings(
  server: { port: number },
  rules: Record<string, unknown>[],
  smtp: Record<string, unknown> = {},
): NotificationsConfig {
  return notificationsSchema.parse({
    smtp: {
      host: '127.0.0.1',
      port: server.port,
      // aiosmtpd offers no STARTTLS: a trusted loopback only.
      requireTls: false,
      from: 'tagd Hall 2 <tagd@plant.example>',
      timeoutMs: 5_000,
      ...smtp,
    },
    rules,
  });
}

async function setup(t: ExecutionContext, clock: Clock, config: NotificationsConfig) {
  const rig = await startAlarmRig(t, clock);
  const logs = captureLogs();
  const notifier = new EmailNotifier({
    alarms: rig.service,
    clock,
    logger: logs.logger,
    store: rig.store,
  });
  t.teardown(() => notifier.stop());
  notifier.apply(config);
  const health = () => ({
    status: rig.store.get(emailHealthTagIds.status)?.value,
    lastError: rig.store.get(emailHealthTagIds.lastError)?.value,
  });
  return { rig, notifier, logs, health };
}

test('real time: a tripping alarm is e-mailed at once, in plant-readable words', async (t) => {
  const server = await startSmtpServer(t);
  const { rig, notifier, health } = await setup(
    t,
    systemClock,
    settings(server, [
      {
        name: 'shift',
        areas: ['Hall2'],
        recipients: ['shift@plant.example', 'boss@plant.example'],
      },
    ]),
  );
  const before = Date.now();
  rig.write('Hall2/Oven1/Temp', 261.5);
  const [mail] = await server.waitForMails(1);
  t.deepEqual(mail?.rcptTos, ['shift@plant.example', 'boss@plant.example']);
  t.is(mail?.mailFrom, 'tagd@plant.example');
  t.is(mail?.headers.subject, '[High] Oven1High: Oven 1 above 250 °C: 261.5 °C');
  const text = mail?.text ?? '';
  t.regex(text, /Oven1High: Oven 1 above 250 °C: 261\.5 °C/);
  t.regex(text, /Priority: High \(severity 750\)/);
  t.regex(text, /Area: {5}Hall2\/Ovens/);
  t.regex(text, /Value: {4}261\.5 \(limit 250\)/);
  t.regex(text, /State: {4}Unacknowledged/);
  const time = /Time: {5}(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC/.exec(text)?.[1];
  t.truthy(time);
  t.true(Date.parse(`${time}Z`) >= Math.floor(before / 1000) * 1000);
  // The server holds the message before the client has read its 250 and counted it.
  await until(() => notifier.state().sent === 1, 'the message counted as sent');
  t.like(notifier.state(), { status: 'On', sent: 1, failed: 0 });
  t.deepEqual(health(), { status: 'On', lastError: '' });
});

test('real time: delay then consolidation window, one message for both alarms, never before delay + window', async (t) => {
  const server = await startSmtpServer(t);
  const { rig } = await setup(
    t,
    systemClock,
    settings(server, [
      { name: 'both', delayMs: 300, consolidationMs: 500, recipients: ['a@plant.example'] },
    ]),
  );
  const started = Date.now();
  rig.write('Hall2/Oven1/Temp', 300);
  rig.write('Hall20/Oven/Temp', 300);
  const [mail] = await server.waitForMails(1);
  t.true(Date.now() - started >= 800);
  t.is(mail?.headers.subject, '[Urgent] 2 alarms: Hall20High, Oven1High');
  // Nothing else follows: both were in the one window.
  await delay(1_000);
  t.is(server.mails.length, 1);
});

test('filter: areas by whole-segment prefix and minPriority; one message per alarm without consolidation', async (t) => {
  const server = await startSmtpServer(t);
  const { rig, notifier } = await setup(
    t,
    new ManualClock(),
    settings(server, [
      { name: 'hall2', areas: ['Hall2'], minPriority: 'Medium', recipients: ['a@plant.example'] },
    ]),
  );
  rig.write('Hall20/Oven/Temp', 300); // Hall20: not Hall2
  rig.write('Hall2/Oven1/Door', true); // Low
  rig.write('Hall2/Oven1/Temp', 300);
  const mails = await server.waitForMails(1);
  await notifier.idle();
  t.is(mails.length, 1);
  t.regex(mails[0]?.headers.subject ?? '', /Oven1High/);
});

test('delayMs: sent only for an alarm still unacknowledged after the delay', async (t) => {
  const server = await startSmtpServer(t);
  const clock = new ManualClock();
  const { rig, notifier } = await setup(
    t,
    clock,
    settings(server, [{ name: 'late', delayMs: 60_000, recipients: ['a@plant.example'] }]),
  );
  rig.write('Hall2/Oven1/Temp', 300);
  rig.write('Hall20/Oven/Temp', 300);
  clock.advance(59_999);
  await notifier.idle();
  t.is(notifier.state().sent, 0);
  // The operator acknowledges one in time: only the other is sent.
  rig.service.acknowledge('Oven1High', { account: 'anna' });
  clock.advance(1);
  const [mail] = await server.waitForMails(1);
  await notifier.idle();
  t.is(server.mails.length, 1);
  t.regex(mail?.headers.subject ?? '', /^\[Urgent\] Hall20High: /);
  t.notRegex(mail?.text ?? '', /Oven1High/);
});

test('consolidationMs: one message per window listing every alarm that qualified in it', async (t) => {
  const server = await startSmtpServer(t);
  const clock = new ManualClock();
  const { rig, notifier } = await setup(
    t,
    clock,
    settings(server, [
      { name: 'digest', consolidationMs: 300_000, recipients: ['a@plant.example'] },
    ]),
  );
  rig.write('Hall2/Oven1/Temp', 300);
  clock.advance(10_000);
  rig.write('Hall20/Oven/Temp', 300);
  clock.advance(10_000);
  rig.write('Hall2/Oven1/Door', true);
  clock.advance(279_999);
  await notifier.idle();
  t.is(server.mails.length, 0);
  clock.advance(1);
  const [mail] = await server.waitForMails(1);
  t.is(mail?.headers.subject, '[Urgent] 3 alarms: Hall20High, Oven1High, Oven1Door');
  t.regex(mail?.text ?? '', /3 alarms need attention \(rule "digest"\)/);
  // The next alarm opens a new window.
  rig.service.acknowledge('Oven1Door', { account: 'anna' });
  rig.write('Hall2/Oven1/Door', false);
  rig.write('Hall2/Oven1/Door', true);
  clock.advance(300_000);
  const mails = await server.waitForMails(2);
  await notifier.idle();
  t.is(mails.length, 2);
  t.regex(mails[1]?.headers.subject ?? '', /^\[Low\] Oven1Door: /);
});

test('an SMTP server that refuses the login: Error with the reason, retried with backoff, dropped and counted; alarms unaffected; a reload with the right password recovers', async (t) => {
  const server = await startSmtpServer(t, { auth: { user: 'tagd', password } });
  const clock = new ManualClock();
  const rules = [{ name: 'shift', recipients: ['a@plant.example'] }];
  const { rig, notifier, logs, health } = await setup(
    t,
    clock,
    settings(server, rules, { username: 'tagd', password: 'wrong-password-1' }),
  );
  // The login is checked at once: Error before any alarm.
  await until(() => notifier.state().status === 'Error', 'Error');
  t.regex(notifier.state().reason ?? '', /EAUTH/);
  t.regex(String(health().lastError), /EAUTH/);

  rig.write('Hall2/Oven1/Temp', 300);
  for (let attempt = 1; attempt < sendAttempts; attempt++) {
    await until(() => notifier.state().retries === attempt, `retry ${attempt}`);
    clock.advance(retryWaitsMs[attempt - 1] as number);
  }
  await until(() => notifier.state().failed === 1, 'the message dropped');
  t.like(notifier.state(), {
    status: 'Error',
    sent: 0,
    failed: 1,
    retries: sendAttempts - 1,
    queued: 0,
  });
  t.is(server.mails.length, 0);
  t.false(logs.text().includes('wrong-password-1'));
  // The alarm went on regardless.
  t.is(rig.service.get('Oven1High')?.state, 'Unacknowledged');
  t.is(rig.service.acknowledge('Oven1High', { account: 'anna' }).state, 'Acknowledged');

  // A reload with the right password: verified at once, and the next alarm goes out.
  notifier.apply(settings(server, rules, { username: 'tagd', password }));
  await until(() => notifier.state().status === 'On', 'On');
  t.deepEqual(health(), { status: 'On', lastError: '' });
  rig.write('Hall20/Oven/Temp', 300);
  const [mail] = await server.waitForMails(1);
  t.is(mail?.login, 'tagd');
  t.false(logs.text().includes(password));
});

test('an SMTP server that is down: Error (connection refused), the message waits for its retry, the alarm is unaffected', async (t) => {
  const server = await startSmtpServer(t);
  const port = server.port;
  await server.stop();
  const clock = new ManualClock();
  const { rig, notifier } = await setup(
    t,
    clock,
    settings({ port }, [{ name: 'shift', recipients: ['a@plant.example'] }]),
  );
  await until(() => notifier.state().status === 'Error', 'Error');
  t.regex(notifier.state().reason ?? '', /ECONNREFUSED/);
  rig.write('Hall2/Oven1/Temp', 300);
  await until(() => notifier.state().retries === 1, 'a retry');
  t.is(rig.service.get('Oven1High')?.state, 'Unacknowledged');
  t.is(notifier.state().queued, 1);
});

test('requireTls (the default) refuses a server that offers no STARTTLS', async (t) => {
  const server = await startSmtpServer(t);
  const { notifier } = await setup(
    t,
    new ManualClock(),
    settings(server, [{ name: 'shift', recipients: ['a@plant.example'] }], { requireTls: true }),
  );
  await until(() => notifier.state().status === 'Error', 'Error');
  t.regex(notifier.state().reason ?? '', /STARTTLS/i);
});
