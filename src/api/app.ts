import Koa from 'koa';
import { consoleRoutes } from '../console/console-routes.js';
import type { ApiDeps } from './api-deps.js';
import { requestEnvelope } from './request-envelope.js';
import type { RouteDefinition } from './route.js';
import { routeDispatcher } from './route-dispatcher.js';
import { buildRouter } from './router.js';
import { alertRoutes } from './routes/alerts.js';
import { assistantConversationRoutes } from './routes/assistant-conversations.js';
import { assistantProposalRoutes } from './routes/assistant-proposals.js';
import { collectionRoutes } from './routes/collections.js';
import { dbcRoutes } from './routes/dbc.js';
import { derivedTagRoutes } from './routes/derived-tags.js';
import { docsRoutes } from './routes/docs.js';
import { driverManagementRoutes } from './routes/driver-management.js';
import { driverRoutes } from './routes/drivers.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { assistantRegistryOf, mcpRoutes } from './routes/mcp.js';
import { metricsRoutes } from './routes/metrics.js';
import { mqttPublisherRoutes } from './routes/mqtt-publishers.js';
import { profileRoutes } from './routes/profile.js';
import { publisherRoutes } from './routes/publishers.js';
import { relayRoutes } from './routes/relay.js';
import { statusRoutes } from './routes/status.js';
import { tagBrowseRoutes } from './routes/tag-browse.js';
import { tagQuerySetsRoutes } from './routes/tag-query-sets.js';
import { tagStreamRoutes } from './routes/tag-stream.js';
import { tagWriteRoutes } from './routes/tag-writes.js';
import { tagsRoutes } from './routes/tags.js';
import { themeRoutes } from './routes/themes.js';
import { userManagementRoutes } from './routes/user-management.js';
import { userRoutes } from './routes/users.js';
import { TagStreamHub } from './tag-stream/tag-stream-hub.js';

export type { ApiDeps } from './api-deps.js';

/** Every documented API route, in the order the OpenAPI document lists them. */
export function apiRoutes(deps: ApiDeps): RouteDefinition[] {
  const streams =
    deps.streams ??
    new TagStreamHub({
      store: deps.store,
      accounts: deps.accounts,
      logger: deps.logger.child({ component: 'api' }),
    });
  // One registry for MCP and the chat: an account's tool calls in flight are counted across both.
  const assistantTools = assistantRegistryOf(deps);
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
    ...derivedTagRoutes(deps),
    ...relayRoutes(deps),
    ...publisherRoutes(deps),
    ...mqttPublisherRoutes(deps),
    ...collectionRoutes(deps),
    ...alertRoutes(deps, streams),
    ...assistantProposalRoutes(deps),
    ...mcpRoutes(deps, assistantTools),
    ...assistantConversationRoutes(deps, assistantTools),
    ...profileRoutes(deps),
    ...themeRoutes(deps),
    ...eventRoutes(deps),
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
  app.use(
    requestEnvelope({
      logger: deps.logger.child({ component: 'api' }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    }),
  );

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
