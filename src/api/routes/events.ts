/**
 * `GET /api/v2/Events` (`AuditView`, Administrators): the daemon's recent audit lines
 * (sign-ins, writes, configuration changes) and its recent warnings and errors, from the
 * in-memory rings of recent-events.ts, so the console can show what the log says without a
 * shell on the host.
 *
 * Decision: a permission of its own, held by Administrators only: the audit names accounts and
 * their actions, and warnings can name hosts and files of the plant network.
 */
import { z } from 'zod';
import { defaultAuditEvents, defaultLogEvents } from '../../recent-events.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const eventSchema = z
  .object({
    id: z.int().describe('Increasing number of the event since tagd started.'),
    time: z.string().describe('When it was logged (ISO 8601).'),
    kind: z
      .enum(['audit', 'log'])
      .describe('`audit`: an audit line; `log`: a warning or error of a component.'),
    level: z.enum(['info', 'warn', 'error', 'fatal']),
    component: z
      .string()
      .optional()
      .describe('For `log`: the component (driver or publisher name, `http`, `history`...).'),
    message: z.string(),
    details: z
      .record(z.string(), z.unknown())
      .describe("The line's other fields, secrets masked as in the log."),
  })
  .meta({ id: 'Event' });

const eventsQuery = z.object({
  kind: z.enum(['audit', 'log']).optional().describe('Only this kind; both when absent.'),
  afterId: z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number')
    .transform(Number)
    .optional()
    .describe('Only events after this id (what is new since the last call).'),
});

/** The events route. */
export function eventRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Events',
      operationId: 'listEvents',
      tag: 'Events',
      summary: 'Recent audit lines, warnings and errors',
      description: `Kept in memory since tagd started, oldest first: the last ${defaultAuditEvents} audit lines (sign-ins and refusals, tag writes, changes of drivers, publishers, collections, accounts, alarms and the profile) and, apart, the last ${defaultLogEvents} warnings and errors any component logged (a flood of warnings never pushes sign-ins out). Lines below the log level (\`TAGD_LOG_LEVEL\`) are not logged and so not kept. The journal (\`journalctl -u tagd\`) has them all.`,
      access: { kind: 'permission', permission: 'AuditView' },
      query: eventsQuery,
      responses: {
        200: {
          description: 'The events.',
          schema: z.object({ events: z.array(eventSchema) }).meta({ id: 'EventList' }),
        },
      },
      problems: [400],
      handle: ({ query }) => ({ events: deps.recentEvents?.list(query.kind, query.afterId) ?? [] }),
    }),
  ];
}
