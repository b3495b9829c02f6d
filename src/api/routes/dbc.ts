import { z } from 'zod';
import { DbcSignalCatalog } from '../../tags/dbc-signal-catalog.js';
import { readDbcSignal } from '../../tags/dbc-signal-reading.js';
import { qualities } from '../../tags/sample.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

/** The latest local value of one DBC signal. */
export const dbcSignalSchema = z
  .object({
    component: z.string().describe('Name of the CAN driver whose DBC defines the signal.'),
    message: z.string().describe('DBC message name.'),
    signal: z.string().describe('DBC signal name.'),
    fullTagId: z.string().describe('The signal’s tag: `<component>/<message>/<signal>`.'),
    utcTimestamp: z
      .string()
      .describe(
        'When the value was decoded, ISO 8601 UTC; for a signal never received, the time of the answer.',
      ),
    quality: z.enum(qualities as [string, ...string[]]),
    value: z
      .union([z.number(), z.boolean(), z.string()])
      .optional()
      .describe('Physical value (raw × factor + offset). Absent for Unavailable and Bad.'),
    unit: z.string().optional().describe('Unit from the DBC; absent when the DBC gives none.'),
    valueText: z
      .string()
      .optional()
      .describe(
        'Label of the value from the DBC value table (VAL_), when it has one. Without a label, ' +
          'for an integer signal whose value is beyond ±2^53 (where `value`, a JSON number, is ' +
          'only the nearest double) and whose factor and offset are integers: the exact decimal ' +
          'of the value.',
      ),
    raw: z
      .number()
      .optional()
      .describe(
        'Raw value before scaling, when the CAN driver reports it; beyond ±2^53 the nearest ' +
          'double (see `rawText`).',
      ),
    rawText: z
      .string()
      .optional()
      .describe(
        'The exact decimal of the raw value when it is beyond ±2^53 (signals over 53 bits), ' +
          'where `raw` is only the nearest double.',
      ),
  })
  .meta({ id: 'DbcSignal' });

/** Response body of GET /api/v2/DBC/{component}/{message}/{signal}. */
export type DbcSignalResponse = z.infer<typeof dbcSignalSchema>;

const name = z.string().min(1).max(256);
const signalParams = z.object({
  component: name.describe('Name of the CAN driver (component).'),
  message: name.describe('DBC message name.'),
  signal: name.describe('DBC signal name.'),
});

/** Latest value of a DBC signal. */
export function dbcRoutes(deps: ApiDeps): RouteDefinition[] {
  const catalog = deps.dbc ?? new DbcSignalCatalog();
  const now = deps.now ?? Date.now;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/DBC/{component}/{message}/{signal}',
      operationId: 'getDbcSignal',
      tag: 'DBC',
      summary: 'Latest local value of one DBC signal',
      description:
        'The signal is the tag `<component>/<message>/<signal>` written by the CAN driver named ' +
        '`component`. An unknown component, message or signal is a 404 whose detail names which ' +
        'one is missing. A signal that is defined but has not been received yet (or whose bus is ' +
        'disconnected) answers 200 with quality `Unavailable` and no value. `unit` comes from ' +
        'the DBC (or the sample metadata); `valueText`, `raw` and `rawText` are present only ' +
        'when the driver attached them to the sample. Signals over 53 bits: `raw` and `value` ' +
        'are JSON numbers, so beyond ±2^53 they are the nearest doubles; `rawText` (and, for an ' +
        'unlabelled signal with integer factor and offset, `valueText`) give the exact digits.',
      access: { kind: 'permission', permission: 'DBCView' },
      params: signalParams,
      responses: { 200: { description: 'The signal’s latest value.', schema: dbcSignalSchema } },
      problems: [400, 404],
      handle: ({ params }): DbcSignalResponse =>
        readDbcSignal(catalog, deps.store, now(), params.component, params.message, params.signal),
    }),
  ];
}
