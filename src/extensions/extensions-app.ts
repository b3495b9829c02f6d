/**
 * The koa app of the extensions server: the main app's pieces (security headers, problem
 * documents, body limits, router) with only the routes the profile enables, and the static apps
 * for everything else.
 */
import type Koa from 'koa';
import type { ApiDeps } from '../api/api-deps.js';
import { createApp } from '../api/app.js';
import type { RouteDefinition } from '../api/route.js';
import { themeStylesheetPath } from '../api/routes/themes.js';
import { type ExtensionApp, extensionAppsMiddleware } from './extension-apps.js';

/** What the extensions server publishes besides its apps. */
export interface ExtensionsRouteSwitches {
  /** The whole `/api/v2`. */
  enableApi: boolean;
  /** `/swagger` and the OpenAPI document `/swagger/v2/swagger.json`. */
  enableDocs: boolean;
}

/** True for a route of the REST API proper (`/api/v2/…`). */
export function isApiRoute(route: RouteDefinition): boolean {
  return route.path.startsWith('/api/v2/');
}

/** True for the interactive docs: Swagger UI, its files, and the OpenAPI document. */
export function isDocsRoute(route: RouteDefinition): boolean {
  return route.path === '/swagger' || route.path.startsWith('/swagger/');
}

/**
 * The part of `routes` the extensions server serves: the API routes with `enableApi`, the docs
 * routes with `enableDocs`, and always `/theme.css` (the apps share the plant's theme);
 * nothing else (not `/healthz`: liveness is the main listener's).
 */
export function extensionsRoutes(
  routes: readonly RouteDefinition[],
  switches: ExtensionsRouteSwitches,
): RouteDefinition[] {
  return routes.filter(
    (route) =>
      route.path === themeStylesheetPath ||
      (switches.enableApi && isApiRoute(route)) ||
      (switches.enableDocs && isDocsRoute(route)),
  );
}

/**
 * Builds the extensions server's app.
 * @param routes the very route list the main app serves (so both share the routes' state: query
 *   sets and their admission limits; the accounts, sign-in limiter and store come in `deps`).
 * @param apps the static apps, folders resolved.
 */
export function createExtensionsApp(
  deps: ApiDeps,
  routes: readonly RouteDefinition[],
  switches: ExtensionsRouteSwitches,
  apps: readonly ExtensionApp[],
): Koa {
  return createApp(deps, {
    routes: extensionsRoutes(routes, switches),
    fallback: extensionAppsMiddleware(apps, deps.logger.child({ component: 'extensions' })),
  });
}
