import Router from '@koa/router';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { TagStore } from '../tags/tag-store.js';
import { problemMiddleware } from './problem.js';

/** What the API reads and writes. */
export interface ApiDeps {
  store: TagStore;
  logger: Logger;
  /** tagd's version, for the liveness answer. */
  version: string;
}

/**
 * Builds the koa application of the REST API. It does not listen: main.ts (and tests) bind it
 * to listeners, so the same app serves loopback HTTP and the plant-network HTTPS listener.
 */
export function createApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: false });
  // Koa's own error printing would put stacks on stderr outside the structured log.
  app.silent = true;
  app.use(securityHeaders);
  app.use(problemMiddleware(deps.logger.child({ component: 'api' })));

  const router = new Router();
  // Liveness for systemd, load balancers and scripts: no auth, no data.
  router.get('/healthz', (context) => {
    context.body = { status: 'ok', version: deps.version };
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

async function securityHeaders(context: Koa.Context, next: Koa.Next): Promise<void> {
  context.set({
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cache-Control': 'no-store',
  });
  await next();
}
