import { z } from 'zod';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const healthSchema = z
  .object({ status: z.literal('ok'), version: z.string() })
  .meta({ id: 'Health' });

/** Liveness for systemd, load balancers and scripts: no auth, no data. */
export function healthRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      tag: 'Service',
      summary: 'Liveness: answers while the daemon runs',
      access: { kind: 'public' },
      responses: { 200: { description: 'Running.', schema: healthSchema } },
      problems: [],
      handle: () => ({ status: 'ok' as const, version: deps.version }),
    }),
  ];
}
