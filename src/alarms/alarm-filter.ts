/**
 * Which alarms a consumer of alarm events wants (a publisher's `alarms`, an e-mail rule's
 * `areas` and `minPriority`), and the port through which such consumers hear the transitions.
 *
 * Areas match by prefix of whole segments: `Hall2` takes `Hall2` and `Hall2/Ovens`, not
 * `Hall20`. An alarm without an area is taken only when no area is named.
 */
import { z } from 'zod';
import { tagPathProblem } from '../tags/tag-path.js';
import { type AlarmPriority, alarmPriorities } from './alarm-schema.js';
import type { AlarmTransition } from './alarm-state.js';
import type { AlarmView } from './alarm-view.js';

/** An area name as the filters take it: tag path segments joined by `/`. */
export const areaSchema = z
  .string()
  .min(1)
  .max(256)
  .superRefine((area, context) => {
    const problem = tagPathProblem(area);
    if (problem !== undefined)
      context.addIssue({ code: 'custom', message: `Invalid area: ${problem}` });
  });

/** The filter fields, shared by the publishers' `alarms` and the e-mail rules. */
export const alarmFilterFields = {
  areas: z
    .array(areaSchema)
    .max(100)
    .optional()
    .describe(
      'Only alarms in these areas or below them (`Hall2` takes `Hall2/Ovens`, not `Hall20`). Default: every alarm.',
    ),
  minPriority: z
    .enum(alarmPriorities)
    .optional()
    .describe(
      'Only alarms of this priority or a higher one (Low < Medium < High < Urgent). Default: Low.',
    ),
};

/** A publisher's `alarms`: also send the transitions of these alarms. */
export const alarmFilterSchema = z
  .strictObject(alarmFilterFields)
  .describe(
    'Also send alarm transitions (each as the journal records it) of the alarms these filters take. Absent: no alarm events.',
  )
  .meta({ id: 'AlarmEventFilter' });

/** A validated alarm filter. */
export type AlarmFilter = z.infer<typeof alarmFilterSchema>;

/** True when `area` is `wanted` or lies below it. */
export function inArea(area: string | undefined, wanted: string): boolean {
  return area !== undefined && (area === wanted || area.startsWith(`${wanted}/`));
}

/** True when the filter takes an alarm of this area and priority. */
export function alarmFilterTakes(
  filter: AlarmFilter,
  alarm: { area?: string | undefined; priority: AlarmPriority },
): boolean {
  if (
    filter.minPriority !== undefined &&
    alarmPriorities.indexOf(alarm.priority) < alarmPriorities.indexOf(filter.minPriority)
  ) {
    return false;
  }
  const areas = filter.areas;
  return (
    areas === undefined || areas.length === 0 || areas.some((area) => inArea(alarm.area, area))
  );
}

/**
 * The running alarms as consumers of their events see them (AlarmService implements it; the
 * daemon wires it). Transitions come after the journal has them, in journal order.
 */
export interface AlarmFeed {
  /** Hears each batch of transitions. Returns the function that unsubscribes. */
  subscribe(
    listener: (transitions: readonly (AlarmTransition & { seq?: number })[]) => void,
  ): () => void;
  /** Every running alarm's current view. */
  list(): AlarmView[];
  /** One running alarm's current view, or undefined. */
  get(name: string): AlarmView | undefined;
}

/**
 * A transition as the publishers send it: the journal's record (`AlertTransition` of the API),
 * with `time` in epoch ms and, when the journal numbered it, its `seq`.
 */
export function transitionDocument(
  transition: AlarmTransition & { seq?: number },
): Record<string, unknown> {
  const { seq, time, name, event, from, to, active, acknowledged } = transition;
  return {
    ...(seq !== undefined ? { seq } : {}),
    time,
    utcTimestamp: new Date(time).toISOString(),
    name,
    ...(transition.area !== undefined ? { area: transition.area } : {}),
    priority: transition.priority,
    severity: transition.severity,
    event,
    from,
    to,
    active,
    acknowledged,
    ...(transition.value !== undefined ? { value: transition.value } : {}),
    ...(transition.limit !== undefined ? { limit: transition.limit } : {}),
    message: transition.message,
    ...(transition.account !== undefined ? { account: transition.account } : {}),
    ...(transition.comment !== undefined ? { comment: transition.comment } : {}),
  };
}
