/**
 * The JSON document a webhook publisher with `alarms` POSTs for alarm transitions, to the same
 * URL as its batches (which are JSON arrays; this is an object, so a receiver tells them apart by
 * the first character or by `type`):
 *
 * ```json
 * { "type": "tagd.alarm.transitions", "publisher": "plant-webhook",
 *   "transitions": [ { "seq": 41, "time": 1767225600000, "utcTimestamp": "2026-01-01T00:00:00.000Z",
 *     "name": "Oven1High", "area": "Hall2/Ovens", "priority": "High", "severity": 750,
 *     "event": "Activated", "from": "Normal", "to": "Unacknowledged", "active": true,
 *     "acknowledged": false, "value": 251.5, "limit": 250, "message": "Oven 1 above 250 °C" } ] }
 * ```
 */
import { transitionDocument } from '../../alarms/alarm-filter.js';
import type { AlarmTransition } from '../../alarms/alarm-state.js';

/** The `type` of an alarm document. */
export const alarmDocumentType = 'tagd.alarm.transitions';

/** Most transitions one document holds; more wait for the next POST. */
export const maxTransitionsPerDocument = 1_000;

/** One POST of alarm transitions. */
export interface AlarmDocument {
  type: typeof alarmDocumentType;
  /** The publisher that sent it. */
  publisher: string;
  /** The transitions, oldest first (`transitionDocument`). */
  transitions: Record<string, unknown>[];
}

/** The document of a publisher for these transitions. */
export function alarmDocument(
  publisher: string,
  transitions: readonly (AlarmTransition & { seq?: number })[],
): AlarmDocument {
  return {
    type: alarmDocumentType,
    publisher,
    transitions: transitions.map((transition) => transitionDocument(transition)),
  };
}
