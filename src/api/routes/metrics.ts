/**
 * `GET /metrics`: the Prometheus scrape endpoint, beside `/healthz` rather than under
 * `/api/v2` (the path every Prometheus job expects, and not served by the extensions server).
 * A peer on loopback may read it without a token (a Prometheus on the same machine, the common
 * setup) unless the profile turns that off; any other caller needs `MetricsView`.
 */
import type { Context } from 'koa';
import { NotFoundError } from '../../errors.js';
import type { ApiDeps } from '../api-deps.js';
import { isLoopbackAddress } from '../loopback-peer.js';
import { defineRoute, type RouteDefinition } from '../route.js';

/** Path of the scrape endpoint. */
export const metricsPath = '/metrics';

/** Options of {@link metricsRoutes}, for tests. */
export interface MetricsRouteOptions {
  /** Whether the request's peer is on loopback. Default: its socket's remote address is. */
  isLoopbackPeer?: (context: Context) => boolean;
}

/** The scrape route. */
export function metricsRoutes(deps: ApiDeps, options: MetricsRouteOptions = {}): RouteDefinition[] {
  const isLoopbackPeer =
    options.isLoopbackPeer ??
    ((context: Context) => isLoopbackAddress(context.req.socket.remoteAddress));
  return [
    defineRoute({
      method: 'get',
      path: metricsPath,
      operationId: 'getMetrics',
      tag: 'Service',
      summary: 'Metrics in the Prometheus text format',
      description:
        "Process and Node.js metrics, and tagd's own (`tagd_…`): drivers, tag store, publishers, history, API requests and sign-ins. The Monitoring section of docs/operations.md lists the main series.",
      access: {
        kind: 'permission',
        permission: 'MetricsView',
        waived: {
          applies: (context) =>
            (deps.metrics?.allowLoopbackWithoutToken() ?? true) && isLoopbackPeer(context),
          description:
            'from a peer on loopback (127.0.0.0/8, ::1), which needs no token unless the profile sets `server.metrics.allowLoopbackWithoutToken` to false',
        },
      },
      responses: {
        200: {
          description: 'Every series (text exposition format 0.0.4).',
          mediaType: 'text/plain',
        },
      },
      problems: [404],
      handle: async ({ context }) => {
        if (deps.metrics === undefined) throw new NotFoundError('Metrics are not collected here.');
        const { contentType, body } = await deps.metrics.exposition();
        context.type = contentType;
        return body;
      },
    }),
  ];
}
