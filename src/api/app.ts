import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import { RequestError } from '../errors.js';
import type { ApiDeps } from './api-deps.js';
import { problemMiddleware } from './problem.js';
import type { RouteDefinition } from './route.js';
import { buildRouter } from './router.js';
import { collectionRoutes } from './routes/collections.js';
import { dbcRoutes } from './routes/dbc.js';
import { docsRoutes } from './routes/docs.js';
import { healthRoutes } from './routes/health.js';
import { publisherRoutes } from './routes/publishers.js';
import { tagQuerySetsRoutes } from './routes/tag-query-sets.js';
import { tagWriteRoutes } from './routes/tag-writes.js';
import { tagsRoutes } from './routes/tags.js';
import { userRoutes } from './routes/users.js';

export type { ApiDeps } from './api-deps.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/** Every documented API route, in the order the OpenAPI document lists them. */
export function apiRoutes(deps: ApiDeps): RouteDefinition[] {
  const routes: RouteDefinition[] = [
    ...healthRoutes(deps),
    ...userRoutes(deps),
    ...tagsRoutes(deps),
    ...tagWriteRoutes(deps),
    ...tagQuerySetsRoutes(deps),
    ...dbcRoutes(deps),
    ...publisherRoutes(deps),
    ...collectionRoutes(deps),
  ];
  // The docs describe this very list, so the document is exactly what is served.
  routes.push(...docsRoutes(deps, () => routes));
  return routes;
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
  app.use(jsonBodies());

  const router = buildRouter(apiRoutes(deps), deps.accounts);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}

/**
 * Parses JSON bodies (256 KiB at most). Errors raised while reading a body (a Content-Encoding
 * that does not decode, a truncated stream) are the client's: they answer 400, never 500.
 */
function jsonBodies(): Koa.Middleware {
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: maxBodyBytes,
    encoding: 'utf-8',
    jsonStrict: true,
  });
  return async (context, next) => {
    try {
      await parse(context, async () => undefined);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number' && status >= 400 && status < 500) throw error;
      throw new RequestError(
        'bad-request',
        400,
        'The request body could not be read (check its Content-Encoding).',
      );
    }
    await next();
  };
}

const strictPolicy = "default-src 'none'; frame-ancestors 'none'";
// The Swagger UI page is the one HTML document served: it may load its same-origin script
// and stylesheet, show the stylesheet's data: images and call this API; nothing external, no
// inline script. (React's style props go through the CSSOM, which style-src does not block.)
const swaggerUiPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const commonHeaders: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
];

// Set on the raw response: these constant values need none of koa's per-call handling, and
// this runs on every request.
async function securityHeaders(context: Koa.Context, next: Koa.Next): Promise<void> {
  const response = context.res;
  for (const [name, value] of commonHeaders) response.setHeader(name, value);
  const swaggerUiPage = context.path === '/swagger' || context.path === '/swagger/';
  response.setHeader('Content-Security-Policy', swaggerUiPage ? swaggerUiPolicy : strictPolicy);
  if (context.secure) response.setHeader('Strict-Transport-Security', 'max-age=31536000');
  await next();
}
