import type { ApiDeps } from '../app.js';
import type { RouteDefinition } from '../route.js';

/** Routes of this area (being written in this session). */
export function tagsRoutes(_deps: ApiDeps): RouteDefinition[] {
  return [];
}
