/**
 * What an alarm shows to the API, the console and its state tags: its state, the reading that
 * led there, and whether that state is confirmed by Good data right now.
 */
import type { Quality, QualityReason, TagValue } from '../tags/sample.js';
import type { Alarm } from './alarm.js';
import type { AlarmCondition, AlarmPriority } from './alarm-schema.js';
import type { AlarmState } from './alarm-state.js';

/** One alarm as the API shows it. */
export interface AlarmView {
  name: string;
  condition: AlarmCondition;
  /** The tag watched; absent for Expression conditions. */
  source?: string;
  priority: AlarmPriority;
  /** 1–1000. */
  severity: number;
  area?: string;
  state: AlarmState;
  /** The condition holds (after its delays), or a latching alarm waits for acknowledgement. */
  active: boolean;
  /** Nothing waits for an operator's acknowledgement. */
  acknowledged: boolean;
  /** Since when it is active, ISO 8601 UTC. */
  activeSince?: string;
  /** When its state last changed, ISO 8601 UTC. */
  changedAt?: string;
  /** The reading of its last transition (see the journal's `value`). */
  value?: TagValue;
  limit?: TagValue;
  /** The source's unit. */
  unit?: string;
  message: string;
  shelve?: {
    kind: 'Timed' | 'OneShot';
    /** ISO 8601 UTC. */
    since: string;
    /** When it ends at the latest, ISO 8601 UTC. */
    until: string;
    account?: string;
    reason?: string;
  };
  suppressed: boolean;
  outOfService: boolean;
  /**
   * `Good`: the condition is evaluated on Good data. `Stale`: it cannot be now (see `problem`);
   * `active` is what it last decided. `Unavailable`: it was never evaluated.
   */
  quality: Quality;
  /** Why the condition cannot be evaluated now. */
  problem?: string;
}

/** How far what an alarm shows about its condition can be trusted (see {@link AlarmView.quality}). */
export function evaluationQuality(alarm: Alarm): {
  quality: Quality;
  reason?: QualityReason;
  message?: string;
} {
  const problem = alarm.problem;
  if (problem === undefined) return { quality: 'Good' };
  const quality: Quality = alarm.current.conditionActive === undefined ? 'Unavailable' : 'Stale';
  return {
    quality,
    ...(problem.reason !== undefined ? { reason: problem.reason } : {}),
    message: problem.message,
  };
}

/** The view of an alarm. */
export function viewOf(alarm: Alarm): AlarmView {
  const { definition } = alarm;
  const state = alarm.current;
  const iso = (ms: number | undefined) =>
    ms === undefined ? undefined : new Date(ms).toISOString();
  const evaluation = evaluationQuality(alarm);
  const unit = alarm.sourceUnit;
  const activeSince = iso(state.activeSince);
  const changedAt = iso(state.changedAt);
  return {
    name: definition.name,
    condition: definition.condition,
    ...(definition.source !== undefined ? { source: definition.source } : {}),
    priority: definition.priority,
    severity: alarm.effectiveSeverity,
    ...(definition.area !== undefined ? { area: definition.area } : {}),
    state: alarm.state,
    active: state.active,
    acknowledged: state.acknowledged,
    ...(activeSince !== undefined ? { activeSince } : {}),
    ...(changedAt !== undefined ? { changedAt } : {}),
    ...(state.value !== undefined ? { value: state.value } : {}),
    ...(state.limit !== undefined ? { limit: state.limit } : {}),
    ...(unit !== undefined ? { unit } : {}),
    message: alarm.message(),
    ...(state.shelve !== undefined
      ? {
          shelve: {
            kind: state.shelve.kind,
            since: new Date(state.shelve.since).toISOString(),
            until: new Date(state.shelve.until).toISOString(),
            ...(state.shelve.account !== undefined ? { account: state.shelve.account } : {}),
            ...(state.shelve.reason !== undefined ? { reason: state.shelve.reason } : {}),
          },
        }
      : {}),
    suppressed: state.suppressed,
    outOfService: state.outOfService,
    quality: evaluation.quality,
    ...(evaluation.message !== undefined ? { problem: evaluation.message } : {}),
  };
}
