import Koa from 'koa';
import { consolePagePath, consoleRoutes } from '../console/console-routes.js';
import { RequestError } from '../errors.js';
import type { ApiDeps } from './api-deps.js';
import { problemMiddleware } from './problem.js';
import { requestMetrics } from './request-metrics.js';
import type { RouteDefinition } from './route.js';
import { routeDispatcher } from './route-dispatcher.js';
import { buildRouter } from './router.js';
import { collectionRoutes } from './routes/collections.js';
import { dbcRoutes } from './routes/dbc.js';
import { docsRoutes } from './routes/docs.js';
import { driverManagementRoutes } from './routes/driver-management.js';
import { driverRoutes } from './routes/drivers.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { mqttPublisherRoutes } from './routes/mqtt-publishers.js';
import { profileRoutes } from './routes/profile.js';
import { publisherRoutes } from './routes/publishers.js';
import { statusRoutes } from './routes/status.js';
import { tagBrowseRoutes } from './routes/tag-browse.js';
import { tagQuerySetsRoutes } from './routes/tag-query-sets.js';
import { tagStreamRoutes } from './routes/tag-stream.js';
import { tagWriteRoutes } from './routes/tag-writes.js';
import { tagsRoutes } from './routes/tags.js';
import { userManagementRoutes } from './routes/user-management.js';
import { userRoutes } from './routes/users.js';
import { TagStreamHub } from './tag-stream/tag-stream-hub.js';

export type { ApiDeps } from './api-deps.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/** Every documented API route, in the order the OpenAPI document lists them. */
export function apiRoutes(deps: ApiDeps): RouteDefinition[] {
  const streams =
    deps.streams ??
    new TagStreamHub({
      store: deps.store,
      accounts: deps.accounts,
      logger: deps.logger.child({ component: 'api' }),
    });
  const routes: RouteDefinition[] = [
    ...healthRoutes(deps),
    ...metricsRoutes(deps),
    ...statusRoutes(deps),
    // Before the management routes: `/api/v2/Users/{name}` must never shadow these fixed
    // routes (the router runs the first match), and those names are reserved for accounts.
    ...userRoutes(deps),
    ...userManagementRoutes(deps),
    ...tagsRoutes(deps),
    ...tagBrowseRoutes(deps),
    ...tagStreamRoutes(deps, streams),
    ...tagWriteRoutes(deps),
    ...tagQuerySetsRoutes(deps),
    ...dbcRoutes(deps),
    ...driverRoutes(deps),
    ...driverManagementRoutes(deps),
    ...publisherRoutes(deps),
    ...mqttPublisherRoutes(deps),
    ...collectionRoutes(deps),
    ...profileRoutes(deps),
    ...consoleRoutes(deps),
  ];
  // The docs describe this very list, so the document is exactly what is served.
  routes.push(...docsRoutes(deps, () => routes));
  return routes;
}

/** Options of {@link createApp}. */
export interface AppOptions {
  /**
   * The routes served. Default: {@link apiRoutes} of the deps. A second app over the same API
   * (the extensions server) passes part of the list the main app serves, so both share the
   * routes' state: query sets, their admission limits.
   */
  routes?: readonly RouteDefinition[];
  /**
   * Answers what no route took (the extensions server's static apps); it sees the request after
   * the security headers, problem documents and body parsing. Default: 404 / 405 problems.
   */
  fallback?: Koa.Middleware;
}

/**
 * Builds the koa application of the REST API. It does not listen: main.ts (and tests) bind it
 * to listeners, so the same app serves loopback HTTP and the plant-network HTTPS listener.
 */
export function createApp(deps: ApiDeps, options: AppOptions = {}): Koa {
  const app = new Koa({ proxy: false });
  // Koa's own error printing would put stacks on stderr outside the structured log.
  app.silent = true;
  // Outermost: the metrics see the status every other middleware settled on.
  if (deps.metrics) app.use(requestMetrics(deps.metrics));
  app.use(securityHeaders);
  app.use(problemMiddleware(deps.logger.child({ component: 'api' })));
  app.use(jsonBodies());

  const router = buildRouter(options.routes ?? apiRoutes(deps), deps.accounts, deps.statusToken);
  app.use(routeDispatcher(router));
  app.use(router.allowedMethods());
  const fallback = options.fallback;
  if (fallback) {
    // A path a route has, asked with another method, is left to allowedMethods (405 + Allow).
    app.use((context, next) =>
      (context as { matched?: unknown[] }).matched?.length ? next() : fallback(context, next),
    );
  }
  return app;
}

/**
 * Parses JSON bodies (256 KiB at most). Errors raised while reading a body (a Content-Encoding
 * that does not decode, a truncated stream) are the client's: they answer 400, never 500.
 *
 * Only the methods the parser reads bodies of (POST, PUT, PATCH) reach it; every other request
 * goes on as the parser itself would let it. The parser's module (co-body and its decoders,
 * about 140 ms of CPU to load) is imported on the first such request, not at start.
 */
function jsonBodies(): Koa.Middleware {
  let parser: Promise<Koa.Middleware> | undefined;
  const parseThenNext: Koa.Middleware = async (context, next) => {
    parser ??= loadBodyParser();
    const parse = await parser;
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
  // Not async: a request without a body (every GET) passes with no frame of its own.
  return (context, next) =>
    parsedMethods.has(context.method) ? parseThenNext(context, next) : next();
}

/** The methods whose bodies @koa/bodyparser reads (its `parsedMethods` default). */
const parsedMethods: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

async function loadBodyParser(): Promise<Koa.Middleware> {
  const { bodyParser } = await import('@koa/bodyparser');
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: maxBodyBytes,
    encoding: 'utf-8',
    jsonStrict: true,
    parsedMethods: [...parsedMethods],
  }) as Koa.Middleware;
}

const strictPolicy = "default-src 'none'; frame-ancestors 'none'";
// The Swagger UI page is one of the two HTML documents served: it may load its same-origin script
// and stylesheet, show the stylesheet's data: images and call this API; nothing external, no
// inline script. (React's style props go through the CSSOM, which style-src does not block.)
const swaggerUiPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
// The console page: its own hashed script and stylesheet, uPlot's canvas, the API (fetch and
// the Tags/Stream event source); no inline script or style, no other origin.
const consolePolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
const commonHeaders: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
];

// Set on the raw response: these constant values need none of koa's per-call handling, and
// this runs on every request (not async either: it hands next()'s promise on, one frame fewer).
function securityHeaders(context: Koa.Context, next: Koa.Next): Promise<void> {
  const response = context.res;
  for (const [name, value] of commonHeaders) response.setHeader(name, value);
  // context.path parses the URL: only for a URL that can be one of the two HTML pages.
  const url = context.req.url ?? '';
  const mayBePage = url[0] !== '/' || url.startsWith('/swagger') || url === '/' || url[1] === '?';
  const path = mayBePage ? context.path : '';
  const policy =
    path === '/swagger' || path === '/swagger/'
      ? swaggerUiPolicy
      : path === consolePagePath
        ? consolePolicy
        : strictPolicy;
  response.setHeader('Content-Security-Policy', policy);
  // What context.secure says with proxy: false (createApp): the socket is TLS.
  if ((context.req.socket as { encrypted?: boolean }).encrypted === true) {
    response.setHeader('Strict-Transport-Security', 'max-age=31536000');
  }
  return next();
}
