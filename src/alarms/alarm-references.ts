/**
 * The tags alarm definitions read, checked against the profile: a reference to a tag no driver
 * of the profile declares is a warning of `tagd profile check` (exit 0), since the tag may come
 * later or from a CAN bus's DBC (not checked here), as for derived tags. The daemon logs the
 * same at start for the tags that do not exist then.
 */
import type { FieldError } from '../errors.js';
import { compileExpression } from '../expressions/program.js';

/** The profile as far as these checks read it (raw or validated). */
interface ProfileShape {
  drivers?: unknown;
  alarms?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The tag references of one alarm entry, each with the field it sits in. */
function referencesOf(alarm: Record<string, unknown>): { field: string; path: string }[] {
  const found: { field: string; path: string }[] = [];
  if (typeof alarm.source === 'string') found.push({ field: 'source', path: alarm.source });
  if (typeof alarm.setpoint === 'string') found.push({ field: 'setpoint', path: alarm.setpoint });
  for (const field of ['expression', 'suppressWhen']) {
    const text = alarm[field];
    if (typeof text !== 'string') continue;
    const outcome = compileExpression(text);
    // An expression that does not compile is reported by the schema, at its position.
    if (!outcome.ok) continue;
    for (const path of outcome.program.references) found.push({ field, path });
  }
  return found;
}

/** Warnings for the alarms' references to tags the profile does not declare. */
export function alarmReferenceWarnings(profile: ProfileShape): FieldError[] {
  const drivers = (Array.isArray(profile.drivers) ? profile.drivers : []).filter(isRecord);
  const byName = new Map<string, Record<string, unknown>>();
  for (const driver of drivers) {
    if (typeof driver.name === 'string') byName.set(driver.name, driver);
  }
  const alarms = Array.isArray(profile.alarms) ? profile.alarms : [];
  const warnings: FieldError[] = [];
  alarms.forEach((alarm, index) => {
    if (!isRecord(alarm) || typeof alarm.name !== 'string' || alarm.enabled === false) return;
    for (const { field, path } of referencesOf(alarm)) {
      const slash = path.indexOf('/');
      const component = slash < 0 ? path : path.slice(0, slash);
      const rest = slash < 0 ? '' : path.slice(slash + 1);
      if (component === 'Publishers') continue;
      const driver = byName.get(component);
      let problem: string | undefined;
      if (driver === undefined) problem = `no driver named '${component}' is in the profile`;
      else if (driver.enabled === false) problem = `driver '${component}' is disabled`;
      else if (driver.type !== 'can' && Array.isArray(driver.tags)) {
        const names = driver.tags.filter(isRecord).map((tag) => tag.name);
        if (!names.includes(rest)) problem = `driver '${component}' has no tag '${rest}'`;
      }
      if (problem === undefined) continue;
      const effect =
        alarm.condition === 'BadQuality' && field === 'source'
          ? 'counts as missing, so the alarm turns active'
          : 'cannot be evaluated, so the alarm shows its state unconfirmed';
      warnings.push({
        path: `alarms[${index}].${field}`,
        message: `reads ${path}, but ${problem}: alarm ${alarm.name} ${effect} until that tag exists.`,
      });
    }
  });
  return warnings;
}
