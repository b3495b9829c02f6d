/**
 * How alarms are put in words on screen. A priority is always written out beside its colour
 * (never colour alone: colour-blind operators, monochrome panels), and a state in plain words.
 */
import type { AlarmPriority, AlarmState, AlertView } from './api-types';

/** Priorities, most urgent first (the banner's and the page's order). */
export const prioritiesUrgentFirst: readonly AlarmPriority[] = ['Urgent', 'High', 'Medium', 'Low'];

/** A state in words. */
export const stateWords: Readonly<Record<AlarmState, string>> = {
  Normal: 'Normal',
  Unacknowledged: 'Active, unacknowledged',
  Acknowledged: 'Active, acknowledged',
  ReturnedUnacknowledged: 'Returned to normal, unacknowledged',
  Shelved: 'Shelved',
  Suppressed: 'Suppressed by design',
  OutOfService: 'Out of service',
};

/** The states shown to operators as alarms (not hidden by a shelve, suppression or service). */
const annunciatedStates: ReadonlySet<AlarmState> = new Set([
  'Unacknowledged',
  'Acknowledged',
  'ReturnedUnacknowledged',
]);

/** The alarm is shown to operators: active or waiting for acknowledgement, no overlay. */
export function isAnnunciated(alarm: AlertView): boolean {
  return annunciatedStates.has(alarm.state);
}

/** An alarm value (or limit) with its unit, `—` when it has none. */
export function alarmValueText(
  value: number | boolean | string | undefined,
  unit: string | undefined,
): string {
  if (value === undefined) return '—';
  const text = typeof value === 'number' ? String(Number(value.toFixed(3))) : String(value);
  return unit && typeof value === 'number' ? `${text} ${unit}` : text;
}

/** Why an account may not do something, said beside the disabled control. */
export const lacking = {
  AlertAcknowledge:
    'Acknowledging needs the AlertAcknowledge permission (Operators and Administrators).',
  AlertShelve: 'Shelving needs the AlertShelve permission (Operators and Administrators).',
  AlertManage: 'Out of service needs the AlertManage permission (Administrators).',
} as const;
