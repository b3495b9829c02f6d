import test from 'ava';
import type { AlarmTransition } from '../../src/alarms/alarm-state.js';
import { composeAlarmEmail } from '../../src/notifications/alarm-email.js';

const base: AlarmTransition = {
  time: Date.UTC(2026, 0, 1, 6, 30),
  name: 'OvenHot',
  event: 'Activated',
  from: 'Normal',
  to: 'Unacknowledged',
  active: true,
  acknowledged: false,
  value: 65.5,
  limit: 64,
  priority: 'High',
  severity: 750,
  area: 'Line1/Oven',
  message: 'Oven at 65.5 °C',
};

test('one alarm: subject with priority, name and message; body with every fact', (t) => {
  const mail = composeAlarmEmail('shift', [{ transition: base, state: 'Unacknowledged' }]);
  t.is(mail.subject, '[High] OvenHot: Oven at 65.5 °C');
  t.is(
    mail.text,
    [
      'An alarm needs attention (rule "shift").',
      '',
      'OvenHot: Oven at 65.5 °C',
      '  Priority: High (severity 750)',
      '  Area:     Line1/Oven',
      '  Time:     2026-01-01 06:30:00 UTC',
      '  Value:    65.5 (limit 64)',
      '  State:    Unacknowledged (active, waiting for an operator)',
      '',
      'Acknowledge in the tagd console, or: POST /api/v2/Alerts/<name>/Acknowledge.',
      'This message was sent by tagd; replies are not read.',
      '',
    ].join('\n'),
  );
});

test('several alarms: highest priority first, then oldest; a re-alarm says so', (t) => {
  const mail = composeAlarmEmail('digest', [
    { transition: { ...base, name: 'A', priority: 'Low', time: 1 }, state: 'Unacknowledged' },
    { transition: { ...base, name: 'B', priority: 'Urgent', time: 3 }, state: 'Acknowledged' },
    {
      transition: { ...base, name: 'C', priority: 'Urgent', time: 2, event: 'ReAlarm' },
      state: 'Unacknowledged',
    },
  ]);
  t.is(mail.subject, '[Urgent] 3 alarms: C, B, A');
  t.regex(mail.text, /^3 alarms need attention \(rule "digest"\)/);
  t.regex(mail.text, /C: [\s\S]*Announced again: still unacknowledged\.[\s\S]*B: [\s\S]*A: /);
  t.regex(mail.text, /State: {4}Acknowledged \(active, an operator has seen it\)/);
});

test('a message with line breaks cannot break the subject line; long subjects are cut', (t) => {
  const mail = composeAlarmEmail('r', [
    {
      transition: { ...base, message: `Bad\r\nBcc: x@evil.example ${'x'.repeat(300)}` },
      state: 'Unacknowledged',
    },
  ]);
  t.false(/[\r\n]/.test(mail.subject));
  t.is(mail.subject.length, 200);
});
