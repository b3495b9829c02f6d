import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { AccountService } from '../auth/account-service.js';
import type { TagStore } from '../tags/tag-store.js';
import { problemMiddleware } from './problem.js';
import type { RouteDefinition } from './route.js';
import { buildRouter } from './router.js';
import { dbcRoutes } from './routes/dbc.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { tagQuerySetsRoutes } from './routes/tag-query-sets.js';
import { tagsRoutes } from './routes/tags.js';
import { userRoutes } from './routes/users.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/** What the API reads and writes. */
export interface ApiDeps {
  store: TagStore;
  logger: Logger;
  /** tagd's version, for the liveness answer. */
  version: string;
  accounts: AccountService;
  /** Audit log for configuration changes made through the API. */
  audit: Logger;
  /** Epoch ms now. Default Date.now. */
  now?: () => number;
}

/** Every documented API route, in the order the OpenAPI document lists them. */
export function apiRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    ...healthRoutes(deps),
    ...userRoutes(deps),
    ...tagsRoutes(deps),
    ...tagQuerySetsRoutes(deps),
    ...dbcRoutes(deps),
    ...docsRoutes(deps),
  ];
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
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: maxBodyBytes,
      encoding: 'utf-8',
      jsonStrict: true,
    }),
  );

  const router = buildRouter(apiRoutes(deps), deps.accounts);
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
  if (context.secure) context.set('Strict-Transport-Security', 'max-age=31536000');
  await next();
}
