/**
 * Alarm e-mail in a running daemon: an SMTP server that refuses tagd's login leaves the daemon
 * running and its alarms working, shows Error in the health tags and the metrics (never the
 * password), and a reload with the right password sends the waiting message.
 */
import { readFile, writeFile } from 'node:fs/promises';
import test from 'ava';
import { emailHealthTagIds } from '../../src/notifications/email-notifier.js';
import { demoDaemon } from '../helpers/demo-daemon.js';
import { startSmtpServer } from '../helpers/smtp-server.js';
import { until } from '../helpers/until.js';

const password = 'The-right-0ne';

test('a refused login: Error shown, daemon and alarms unaffected; a reload with the right password sends the message', async (t) => {
  t.timeout(300_000);
  const server = await startSmtpServer(t, { auth: { user: 'tagd', password } });
  const smtp = {
    host: '127.0.0.1',
    port: server.port,
    requireTls: false,
    username: 'tagd',
    password: 'not-the-password',
    from: 'tagd <tagd@plant.example>',
  };
  const { daemon, profileFile, logs } = await demoDaemon(t, {
    profile: (demo: Record<string, unknown>) => {
      const document = demo as Record<string, unknown> & { alarms: unknown[] };
      document.alarms.push({
        name: 'Always',
        condition: 'Expression',
        expression: '1 > 0',
        priority: 'Urgent',
        area: 'Test/Bench',
        message: 'The bench alarm is on',
      });
      document.notifications = {
        smtp,
        rules: [{ name: 'bench', areas: ['Test'], recipients: ['bench@plant.example'] }],
      };
    },
  });
  const store = daemon.store;
  const alarms = daemon.alarms;
  if (store === undefined || alarms === undefined) throw new Error('daemon not started');
  await until(() => store.get(emailHealthTagIds.status)?.value === 'Error', 'Error');
  t.regex(String(store.get(emailHealthTagIds.lastError)?.value), /EAUTH/);
  t.is(alarms.get('Always')?.state, 'Unacknowledged');
  const metrics = (await daemon.metrics?.exposition())?.body ?? '';
  t.regex(metrics, /tagd_notification_email_status\{status="Error"\} 1/);
  t.is(server.mails.length, 0);

  // The right password, by a reload of the profile file.
  const document = JSON.parse(await readFile(profileFile, 'utf8'));
  document.notifications.smtp.password = password;
  await writeFile(profileFile, JSON.stringify(document));
  const summary = await daemon.reload('api');
  t.true(summary.restarted.includes('notifications'));
  const [mail] = await server.waitForMails(1);
  t.is(mail?.headers.subject, '[Urgent] Always: The bench alarm is on');
  t.deepEqual(mail?.rcptTos, ['bench@plant.example']);
  await until(() => store.get(emailHealthTagIds.status)?.value === 'On', 'On');
  // The server holds the message before the daemon has read its 250 and counted it.
  const sentOnce = /tagd_notification_emails_total\{outcome="sent"\} 1/;
  await until(
    async () => sentOnce.test((await daemon.metrics?.exposition())?.body ?? ''),
    'the sent counter',
    60_000,
    20,
  );
  t.false(logs.text().includes('not-the-password'));
  t.false(logs.text().includes(password));
  // The password is sealed in the profile file.
  t.regex(JSON.parse(await readFile(profileFile, 'utf8')).notifications.smtp.password, /^enc:v1:/);
});
