/**
 * The states of an alarm (ISA-18.2, OPC UA Part 9) and the record of a transition between them,
 * as the journal keeps it and the Stream sends it.
 *
 * ```
 *    Normal --condition holds--> Unacknowledged --acknowledge--> Acknowledged
 *      ^                           |        ^                             |
 *      |          condition gone   |        | condition holds again       |
 *      |          (not latching)   v        |                             |
 *      +---acknowledge--- ReturnedUnacknowledged                          |
 *      +------------------------------------------- condition gone -------+
 *
 *    Unacknowledged, still active after reAlarmAfterMs: announced again (ReAlarm), stays.
 *    latching: condition gone leaves an Unacknowledged alarm active until acknowledged
 *    (then Normal).
 *
 *    Overlays, shown instead while they last, over any of the four states:
 *      OutOfService  >  Shelved (timed, or one-shot until it clears)  >  Suppressed
 *    The alarm follows its condition underneath (journaled). When the last overlay ends, an
 *    alarm whose condition is gone is Normal; an active one shows its acknowledgement (a new
 *    occurrence during the overlay: Unacknowledged).
 * ```
 */
import type { TagValue } from '../tags/sample.js';
import type { AlarmPriority } from './alarm-schema.js';

/** What an alarm shows: the ISA-18.2 state, an overlay taking precedence. */
export type AlarmState =
  | 'Normal'
  | 'Unacknowledged'
  | 'Acknowledged'
  | 'ReturnedUnacknowledged'
  | 'Shelved'
  | 'Suppressed'
  | 'OutOfService';

/** Every state, in the order the API documents them. */
export const alarmStates: readonly AlarmState[] = [
  'Normal',
  'Unacknowledged',
  'Acknowledged',
  'ReturnedUnacknowledged',
  'Shelved',
  'Suppressed',
  'OutOfService',
];

/** What happened in a transition. */
export type AlarmEvent =
  /** The condition held (for onDelayMs): the alarm turned active. */
  | 'Activated'
  /** The condition was gone (for offDelayMs): the alarm cleared (a latching one stays active). */
  | 'Cleared'
  /** An operator acknowledged the alarm. */
  | 'Acknowledged'
  /** An active alarm stayed unacknowledged for reAlarmAfterMs: announced again. */
  | 'ReAlarm'
  /** An operator shelved the alarm. */
  | 'Shelved'
  /** An operator unshelved the alarm. */
  | 'Unshelved'
  /** A shelve ended by itself: its time was up, or (one-shot) the alarm cleared. */
  | 'ShelveEnded'
  /** suppressWhen turned true. */
  | 'Suppressed'
  /** suppressWhen turned false. */
  | 'Unsuppressed'
  /** An operator took the alarm out of service. */
  | 'OutOfService'
  /** An operator put the alarm back in service. */
  | 'InService';

/** Every event, in the order the API documents them. */
export const alarmEvents: readonly AlarmEvent[] = [
  'Activated',
  'Cleared',
  'Acknowledged',
  'ReAlarm',
  'Shelved',
  'Unshelved',
  'ShelveEnded',
  'Suppressed',
  'Unsuppressed',
  'OutOfService',
  'InService',
];

/** One transition of one alarm: a row of the journal, an event of the Stream. */
export interface AlarmTransition {
  /** When it happened, epoch ms. */
  time: number;
  /** The alarm's name. */
  name: string;
  event: AlarmEvent;
  from: AlarmState;
  to: AlarmState;
  /** Whether the alarm is active after the transition. */
  active: boolean;
  /** Whether the alarm is acknowledged (nothing waits for an operator) after the transition. */
  acknowledged: boolean;
  /**
   * The value compared with the limit when the transition happened: the source's value
   * (RateOfChange: its change per second; BadQuality: the source's quality). Absent when none
   * was at hand.
   */
  value?: TagValue;
  /** The limit (Digital: the alarm value) it was compared with. */
  limit?: TagValue;
  /** The account that acted, for operator actions. */
  account?: string;
  /** The operator's comment, or why an automatic transition happened. */
  comment?: string;
  priority: AlarmPriority;
  /** 1–1000. */
  severity: number;
  area?: string;
  /** The alarm's message, its placeholders filled with this transition's values. */
  message: string;
}

/** The shelve an operator put on an alarm. */
export interface Shelve {
  /** `Timed`: until `until`. `OneShot`: until the alarm next clears, at most until `until`. */
  kind: 'Timed' | 'OneShot';
  /** When the shelve ends at the latest, epoch ms. */
  until: number;
  /** When it was put, epoch ms. */
  since: number;
  account?: string;
  reason?: string;
}

/**
 * What an alarm keeps across a restart: everything an operator did and everything the
 * condition decided. Pending delays are not kept: the condition is evaluated anew at start.
 */
export interface AlarmSnapshot {
  /** The condition after its delays; undefined until it was first evaluated. */
  conditionActive: boolean | undefined;
  /** Active: the condition, or a latching alarm held until acknowledged. */
  active: boolean;
  /** Nothing waits for an operator's acknowledgement. */
  acknowledged: boolean;
  /** Since when the alarm is active, epoch ms. */
  activeSince?: number;
  shelve?: Shelve;
  suppressed: boolean;
  outOfService: boolean;
  /** The value and limit of the last transition, shown until the next one. */
  value?: TagValue;
  limit?: TagValue;
  /** When the state last changed, epoch ms. */
  changedAt?: number;
}

/** A new alarm's snapshot: never evaluated, nothing to acknowledge. */
export function initialSnapshot(): AlarmSnapshot {
  return {
    conditionActive: undefined,
    active: false,
    acknowledged: true,
    suppressed: false,
    outOfService: false,
  };
}

/** The state an alarm shows for a snapshot: an overlay, else the ISA-18.2 state. */
export function stateOf(snapshot: AlarmSnapshot): AlarmState {
  if (snapshot.outOfService) return 'OutOfService';
  if (snapshot.shelve !== undefined) return 'Shelved';
  if (snapshot.suppressed) return 'Suppressed';
  if (snapshot.active) return snapshot.acknowledged ? 'Acknowledged' : 'Unacknowledged';
  return snapshot.acknowledged ? 'Normal' : 'ReturnedUnacknowledged';
}
