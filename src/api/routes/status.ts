import { z } from 'zod';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { driverReportSchema } from './drivers.js';

/** What `tagd status` shows: the daemon's parts and whether each is well. */
export const statusSchema = z
  .object({
    version: z.string().describe("tagd's version."),
    pid: z.int().describe("The daemon's process id."),
    uptimeSeconds: z.number().min(0).describe('Seconds since the daemon process started.'),
    drivers: z
      .array(driverReportSchema)
      .describe('The running drivers, as `GET /api/v2/Drivers` lists them.'),
    publishers: z
      .array(
        z.object({
          name: z.string(),
          type: z.enum(['webhook', 'mqtt']),
          status: z.enum(['On', 'Off', 'Error']),
          reason: z.string().optional().describe('Why an Off publisher is off.'),
          lastError: z
            .string()
            .optional()
            .describe('Why the last delivery failed, when it did; never a secret.'),
        }),
      )
      .describe('The webhook, then the MQTT publishers, each in configuration order.'),
    history: z
      .object({
        backend: z.string().describe('`sqlite` or `postgres`.'),
        state: z
          .enum(['Ok', 'Outage'])
          .describe('`Outage`: the last append failed; samples are buffered and retried.'),
        buffered: z.int().describe('Samples waiting in memory for the next append.'),
        appended: z.int().describe('Samples stored since start.'),
        dropped: z.int().describe('Samples dropped since start (buffer full, or refused).'),
      })
      .nullable()
      .describe('null when the profile has no history section.'),
    listeners: z
      .array(z.object({ name: z.string(), url: z.string() }))
      .describe('Where the daemon listens.'),
  })
  .meta({ id: 'DaemonStatus' });

/** `GET /api/v2/Status`: for `tagd status` on the daemon's machine, with the local status token. */
export function statusRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Status',
      operationId: 'getStatus',
      tag: 'Service',
      summary: 'Drivers, publishers, history and listeners at a glance (tagd status)',
      description:
        'No tag values and no configuration. The token is a file in the state directory, so only root and the daemon user on the same machine can ask.',
      access: { kind: 'status-token' },
      responses: { 200: { description: 'The status.', schema: statusSchema } },
      problems: [],
      handle: (): z.infer<typeof statusSchema> => {
        const history = deps.history;
        const stats = history?.stats();
        return {
          version: deps.version,
          pid: process.pid,
          uptimeSeconds: Math.round(process.uptime()),
          drivers: deps.drivers?.list() ?? [],
          publishers: [
            ...(deps.publishers?.list() ?? []).map((state) => ({
              state,
              type: 'webhook' as const,
            })),
            ...(deps.mqttPublishers?.list() ?? []).map((state) => ({
              state,
              type: 'mqtt' as const,
            })),
          ].map(({ state: publisher, type }) => ({
            name: publisher.name,
            type,
            status: publisher.status,
            ...(publisher.reason === undefined ? {} : { reason: publisher.reason }),
            ...(publisher.lastDelivery?.ok === false && publisher.lastDelivery.error
              ? { lastError: publisher.lastDelivery.error }
              : {}),
          })),
          history:
            history && stats
              ? {
                  backend: deps.profile?.current().history?.backend ?? 'unknown',
                  state: history.inOutage ? 'Outage' : 'Ok',
                  buffered: stats.buffered,
                  appended: stats.appended,
                  dropped: stats.dropped + stats.rejected,
                }
              : null,
          listeners: deps.listeners?.() ?? [],
        };
      },
    }),
  ];
}
