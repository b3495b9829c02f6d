import type Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { RouteIndex, type RouteLayer } from './route-index.js';

/** The context as @koa/router extends it: the path parameters. */
type WithParams = { params?: Record<string, string> };

/**
 * The middleware that runs a router's routes: what `router.routes()` does for tagd's router,
 * at a fraction of its cost per request (issue 15).
 *
 * The router still defines everything: its path syntax, the patterns it compiled, parameter
 * decoding (`layer.params`), HEAD on GET routes, and `router.allowedMethods()` after this for
 * 405/501/OPTIONS. What differs is the dispatch: `routes()` tests every layer's pattern, builds
 * and composes a middleware chain, reads the Host header and formats a debug line on every
 * request; here a {@link RouteIndex} gives the few layers that can match, and the first whose
 * method and pattern match runs. Its `next` tries the following matching layers, as the chain
 * `routes()` composes would (a route that does not claim a request passes it on this way),
 * and after the last one the rest of the app.
 *
 * Set on the context, as `routes()` sets them: `params` before each layer runs, and `matched`
 * (every layer whose pattern matches the path, any method) when the request goes on past the
 * routes, for `allowedMethods()` and the extensions server's fallback. The other fields
 * `routes()` sets (`captures`, `routerPath`, `_matchedRoute`…) are not read in tagd.
 *
 * @throws Error at build when a layer is router middleware (`router.use`) or has more than one
 *   handler: tagd's router has neither, and this dispatch would not run them as `routes()` does.
 */
export function routeDispatcher(router: Router): Middleware {
  for (const layer of router.stack) {
    if (layer.methods.length === 0 || layer.stack.length !== 1) {
      throw new Error(`routeDispatcher: ${String(layer.path)} is not a single-handler route`);
    }
  }
  const index = new RouteIndex(router.stack);
  const runFrom = (
    context: Context,
    next: Next,
    path: string,
    candidates: readonly RouteLayer[],
    start: number,
  ): Promise<unknown> => {
    const method = context.method;
    for (let position = start; position < candidates.length; position++) {
      const layer = candidates[position] as RouteLayer;
      if (!layer.methods.includes(method)) continue;
      const match = layer.regexp.exec(path);
      if (match === null) continue;
      // Merged into the earlier layers' parameters, as routes() does for a request passed on.
      const params = layer.params(path, match.slice(1), (context as WithParams).params);
      (context as WithParams).params = params;
      (context.request as { params?: unknown }).params = params;
      const handler = layer.stack[0] as Middleware;
      return Promise.resolve(
        handler(context, () => runFrom(context, next, path, candidates, position + 1)),
      );
    }
    (context as { matched?: RouteLayer[] }).matched = router.stack.filter((layer) =>
      layer.regexp.test(path),
    );
    return next();
  };
  return (context, next) => {
    const path = context.path;
    return runFrom(context, next, path, index.candidates(path), 0);
  };
}
