/**
 * The text of an alarm e-mail: a subject a phone's lock screen makes sense of, and a plain-text
 * body listing each alarm with its message, priority, area, time, value and state. No console
 * link: the profile knows no public URL of the console, so none is guessed.
 */
import { alarmPriorities } from '../alarms/alarm-schema.js';
import type { AlarmState, AlarmTransition } from '../alarms/alarm-state.js';
import type { TagValue } from '../tags/sample.js';

/** One alarm in a message: the transition that announced it, and its state when sent. */
export interface MailedAlarm {
  transition: AlarmTransition;
  /** The alarm's state when the message is composed (it may have moved on). */
  state: AlarmState;
}

/** Subject and body of one message. */
export interface AlarmEmail {
  subject: string;
  text: string;
}

const stateWords: Record<AlarmState, string> = {
  Normal: 'Normal (returned to normal, acknowledged)',
  Unacknowledged: 'Unacknowledged (active, waiting for an operator)',
  Acknowledged: 'Acknowledged (active, an operator has seen it)',
  ReturnedUnacknowledged: 'Returned to normal, not yet acknowledged',
  Shelved: 'Shelved',
  Suppressed: 'Suppressed by design',
  OutOfService: 'Out of service',
};

/** Most characters of a subject (mail clients cut longer ones anyway). */
const maxSubject = 200;

/**
 * Composes the message of a rule for its alarms (one, or a consolidated list), highest
 * priority first, then oldest first.
 */
export function composeAlarmEmail(rule: string, alarms: readonly MailedAlarm[]): AlarmEmail {
  const sorted = [...alarms].sort(
    (a, b) =>
      alarmPriorities.indexOf(b.transition.priority) -
        alarmPriorities.indexOf(a.transition.priority) || a.transition.time - b.transition.time,
  );
  const first = sorted[0] as MailedAlarm;
  const top = first.transition.priority;
  const subject =
    sorted.length === 1
      ? `[${top}] ${first.transition.name}: ${first.transition.message}`
      : `[${top}] ${sorted.length} alarms: ${sorted.map((alarm) => alarm.transition.name).join(', ')}`;
  const lines = [
    sorted.length === 1
      ? `An alarm needs attention (rule "${rule}").`
      : `${sorted.length} alarms need attention (rule "${rule}").`,
    '',
  ];
  for (const { transition, state } of sorted) {
    lines.push(`${transition.name}: ${transition.message}`);
    lines.push(`  Priority: ${transition.priority} (severity ${transition.severity})`);
    if (transition.area !== undefined) lines.push(`  Area:     ${transition.area}`);
    lines.push(`  Time:     ${utc(transition.time)}`);
    if (transition.value !== undefined) {
      const limit = transition.limit === undefined ? '' : ` (limit ${text(transition.limit)})`;
      lines.push(`  Value:    ${text(transition.value)}${limit}`);
    }
    lines.push(`  State:    ${stateWords[state]}`);
    if (transition.event === 'ReAlarm') lines.push('  Announced again: still unacknowledged.');
    lines.push('');
  }
  lines.push('Acknowledge in the tagd console, or: POST /api/v2/Alerts/<name>/Acknowledge.');
  lines.push('This message was sent by tagd; replies are not read.');
  return { subject: oneLine(subject), text: `${lines.join('\n')}\n` };
}

/** `2026-01-01 06:30:00 UTC`. */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

function text(value: TagValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// A message template may hold line breaks; a subject must not (header injection, and clients).
function oneLine(subject: string): string {
  const flat = subject.replace(/[\r\n\t]+/g, ' ');
  return flat.length > maxSubject ? `${flat.slice(0, maxSubject - 1)}…` : flat;
}
