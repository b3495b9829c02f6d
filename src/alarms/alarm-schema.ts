/**
 * An alarm definition: one entry of the profile's `alarms[]`, and the body of the API's
 * `PUT /api/v2/Alerts/Definitions/{name}`. Flat, with the fields each condition needs checked
 * per condition, so every error is reported with its path at once.
 */
import { z } from 'zod';
import { segmentPattern, tagPathProblem } from '../tags/tag-path.js';
import { alarmExpressionProblem } from './expression-compiler.js';

/** What an alarm watches for. */
export const alarmConditions = [
  'High',
  'HighHigh',
  'Low',
  'LowLow',
  'Deviation',
  'RateOfChange',
  'Digital',
  'BadQuality',
  'Expression',
] as const;

/** What an alarm watches for. */
export type AlarmCondition = (typeof alarmConditions)[number];

/** Priorities, lowest first. */
export const alarmPriorities = ['Low', 'Medium', 'High', 'Urgent'] as const;

/** How urgent an alarm is. */
export type AlarmPriority = (typeof alarmPriorities)[number];

/** Severity (OPC UA, 1–1000) of a priority when the definition sets none. */
export const defaultSeverity: Readonly<Record<AlarmPriority, number>> = {
  Low: 250,
  Medium: 500,
  High: 750,
  Urgent: 1000,
};

/** Conditions that compare a number with `limit` (and so take a deadband). */
export const limitConditions: ReadonlySet<AlarmCondition> = new Set([
  'High',
  'HighHigh',
  'Low',
  'LowLow',
  'Deviation',
  'RateOfChange',
]);

/**
 * Names the API has fixed routes under (`/api/v2/Alerts/Journal`…), so no alarm may take them,
 * in any case.
 */
export const reservedAlarmNames: readonly string[] = [
  'Acknowledge',
  'Definitions',
  'Journal',
  'Statistics',
  'Stream',
];

/** Longest on/off delay and re-alarm time, ms: one day. */
const maxDelayMs = 86_400_000;

const tagPath = (what: string) =>
  z
    .string()
    .min(1)
    .superRefine((path, context) => {
      const problem = tagPathProblem(path);
      if (problem !== undefined) {
        context.addIssue({ code: 'custom', message: `Invalid tag path: ${problem}` });
      } else if (path === 'Alarms' || path.startsWith('Alarms/')) {
        // An alarm fed by alarm state tags would write what it reads, in the store's own
        // notification: such chains can oscillate without end.
        context.addIssue({
          code: 'custom',
          message: `${what} cannot be an alarm state tag (Alarms/…).`,
        });
      }
    });

/** One alarm definition. */
export const alarmDefinitionSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(segmentPattern, 'may only hold letters, digits and _ . : -')
      .refine(
        (name) =>
          !reservedAlarmNames.some((reserved) => reserved.toLowerCase() === name.toLowerCase()),
        {
          message: `is reserved: not one of ${reservedAlarmNames.join(', ')}, in any case (fixed routes of /api/v2/Alerts)`,
        },
      )
      .describe('Unique name; also the segment of the state tags Alarms/<name>/….'),
    source: tagPath('The source')
      .optional()
      .describe(
        'The tag watched (a full tag path). Required, except for Expression conditions (there it only lends its unit to the message).',
      ),
    condition: z
      .enum(alarmConditions)
      .describe(
        'High/HighHigh: value above limit. Low/LowLow: value below limit. Deviation: |value − ' +
          'setpoint| above limit. RateOfChange: |change per second| above limit. Digital: value ' +
          'equals `value`. BadQuality: the source is not Good (for longer than onDelayMs). ' +
          'Expression: a boolean expression of the derived-tags language (`expression`).',
      ),
    limit: z
      .number()
      .finite()
      .optional()
      .describe(
        'High, HighHigh, Low, LowLow: the limit, in the source’s unit. Deviation: the largest ' +
          'allowed distance from the setpoint (> 0). RateOfChange: the largest allowed change per ' +
          'second (> 0).',
      ),
    deadband: z
      .number()
      .finite()
      .min(0)
      .optional()
      .describe(
        'Limit conditions only: an active alarm clears once the value is back by more than this ' +
          'inside the limit (High: value ≤ limit − deadband). Default 0.',
      ),
    setpoint: z
      .union([z.number().finite(), tagPath('The setpoint')])
      .optional()
      .describe('Deviation only, required there: a constant, or the tag path of the setpoint.'),
    value: z
      .union([z.boolean(), z.number().finite(), z.string().max(256)])
      .optional()
      .describe(
        'Digital only, required there: the value that is the alarm (e.g. true for a fault bit), ' +
          'compared by type and value.',
      ),
    expression: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'Expression only, required there: a boolean expression of the derived-tags language, e.g. `{Line1/Temp} > 90 && {Line1/Door}`. It holds while true; inputs not Good leave the alarm as it is.',
      ),
    onDelayMs: z
      .int()
      .min(0)
      .max(maxDelayMs)
      .default(0)
      .describe('The condition must hold this long before the alarm turns active, ms. Default 0.'),
    offDelayMs: z
      .int()
      .min(0)
      .max(maxDelayMs)
      .default(0)
      .describe('The condition must be gone this long before the alarm clears, ms. Default 0.'),
    priority: z.enum(alarmPriorities).default('Medium').describe('Default Medium.'),
    severity: z
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'OPC UA severity, 1–1000. Default by priority: Low 250, Medium 500, High 750, Urgent 1000.',
      ),
    area: z
      .string()
      .min(1)
      .max(256)
      .superRefine((area, context) => {
        const problem = tagPathProblem(area);
        if (problem !== undefined) {
          context.addIssue({ code: 'custom', message: `Invalid area: ${problem}` });
        }
      })
      .optional()
      .describe('Plant area, segments joined by / (e.g. Hall2/Ovens), for filtering.'),
    message: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe(
        'Text shown and sent with the alarm; {value}, {limit}, {unit} and {name} are replaced. ' +
          'Default: a sentence naming the condition.',
      ),
    latching: z
      .boolean()
      .default(false)
      .describe(
        'An active alarm stays active after its condition clears, until acknowledged. Default ' +
          'false: it returns to normal unacknowledged.',
      ),
    reAlarmAfterMs: z
      .int()
      .min(1000)
      .max(maxDelayMs)
      .optional()
      .describe('An active alarm still unacknowledged after this long is announced again, ms.'),
    suppressWhen: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'A boolean expression of the derived-tags language: while true, the alarm is suppressed by design (e.g. `{Line1/Running} == false`). Unknown (inputs not Good) leaves the suppression as it is.',
      ),
    maxShelveMinutes: z
      .int()
      .min(1)
      .max(10_080)
      .default(480)
      .describe(
        'Longest an operator may shelve this alarm, minutes (one-shot shelves too). Default 480.',
      ),
    enabled: z.boolean().default(true).describe('A disabled alarm is not evaluated. Default true.'),
  })
  .superRefine((definition, context) => {
    const problem = (path: string, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    const { condition } = definition;
    const isLimit = limitConditions.has(condition);
    if (condition !== 'Expression' && definition.source === undefined) {
      problem('source', `Required for condition ${condition}.`);
    }
    if (isLimit && definition.limit === undefined) {
      problem('limit', `Required for condition ${condition}.`);
    }
    if (!isLimit) {
      if (definition.limit !== undefined) problem('limit', 'Applies only to limit conditions.');
      if (definition.deadband !== undefined) {
        problem('deadband', 'Applies only to limit conditions.');
      }
    }
    if (
      (condition === 'Deviation' || condition === 'RateOfChange') &&
      definition.limit !== undefined
    ) {
      if (definition.limit <= 0) problem('limit', 'Must be greater than 0.');
      else if (definition.deadband !== undefined && definition.deadband >= definition.limit) {
        problem('deadband', 'Must be smaller than limit, or the alarm would never clear.');
      }
    }
    if (condition === 'Deviation') {
      if (definition.setpoint === undefined)
        problem('setpoint', 'Required for condition Deviation.');
    } else if (definition.setpoint !== undefined) {
      problem('setpoint', 'Applies only to condition Deviation.');
    }
    if (condition === 'Digital') {
      if (definition.value === undefined) problem('value', 'Required for condition Digital.');
    } else if (definition.value !== undefined) {
      problem('value', 'Applies only to condition Digital.');
    }
    if (condition === 'Expression') {
      if (definition.expression === undefined) {
        problem('expression', 'Required for condition Expression.');
      } else {
        const refused = alarmExpressionProblem(definition.expression);
        if (refused !== undefined) problem('expression', refused);
      }
    } else if (definition.expression !== undefined) {
      problem('expression', 'Applies only to condition Expression.');
    }
    if (definition.suppressWhen !== undefined) {
      const refused = alarmExpressionProblem(definition.suppressWhen);
      if (refused !== undefined) problem('suppressWhen', refused);
    }
  })
  .meta({ id: 'AlarmDefinition' });

/** A validated alarm definition, defaults applied. */
export type AlarmDefinition = z.infer<typeof alarmDefinitionSchema>;
/** An alarm definition as written, before defaults. */
export type AlarmDefinitionInput = z.input<typeof alarmDefinitionSchema>;
