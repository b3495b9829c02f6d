import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { qualities } from '../../tags/sample.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

/** A driver's state, counters and tag qualities (`GET /api/v2/Drivers/{name}`). */
export const driverReportSchema = z
  .object({
    name: z.string().describe('Component name: the first segment of its tags.'),
    type: z.string().describe('Driver type, e.g. `modbus`, `opcua`, `can`, `simulator`.'),
    state: z
      .enum(['Running', 'Reconnecting', 'Stopped', 'Failed'])
      .describe(
        '`Running`; `Reconnecting` (not connected, retrying on its backoff; also while starting); `Stopped`; `Failed` (gave up until its configuration changes).',
      ),
    driverState: z
      .enum(['Stopped', 'Starting', 'Running', 'Reconnecting', 'Error'])
      .describe('The state as the driver itself reports it.'),
    since: z.string().describe('When the driver entered its state, ISO 8601 UTC.'),
    message: z.string().optional().describe('Why the driver is in its state.'),
    lastError: z
      .object({ message: z.string(), utcTimestamp: z.string() })
      .optional()
      .describe('The most recent error seen (kept after recovery), with when it began.'),
    counters: z
      .record(z.string(), z.number())
      .describe('Running totals the driver keeps (listed on the page of its driver in docs/).'),
    tagCount: z.int().describe('Tags the driver serves.'),
    tagsByQuality: z
      .object(Object.fromEntries(qualities.map((quality) => [quality, z.int()])))
      .describe('Tags of the driver per quality, as the store holds them now.'),
  })
  .meta({ id: 'DriverReport' });

const driverParams = z.object({
  name: z.string().min(1).max(256).describe('Driver (component) name.'),
});

/** The running drivers. */
export function driverRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'DriverView' } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Drivers',
      operationId: 'listDrivers',
      tag: 'Drivers',
      summary: 'Every driver: state, last error, counters, tags by quality',
      description:
        "Drivers that are disabled in the profile are not listed. A driver that failed to start, or was left out because a file it names cannot be used, is listed `Failed` with no tags and a `message` naming only the fields at fault (the gateway log has the detail). Nothing of a driver's configuration (addresses, credentials) is shown.",
      access,
      responses: {
        200: {
          description: 'The drivers, in profile order.',
          schema: z.object({ drivers: z.array(driverReportSchema) }).meta({ id: 'DriverList' }),
        },
      },
      problems: [],
      handle: () => ({ drivers: deps.drivers?.list() ?? [] }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Drivers/{name}',
      operationId: 'getDriver',
      tag: 'Drivers',
      summary: 'One driver: state, last error, counters, tags by quality',
      access,
      params: driverParams,
      responses: { 200: { description: 'The driver.', schema: driverReportSchema } },
      problems: [404],
      handle: ({ params }) => {
        const report = deps.drivers?.get(params.name);
        if (!report) throw new NotFoundError(`No driver named '${params.name.slice(0, 300)}'.`);
        return report;
      },
    }),
  ];
}
