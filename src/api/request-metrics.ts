/**
 * Counts every answer of an app and times it, labelled by route template, method and status
 * (see {@link ApiMetrics.requestEnded}). Outermost middleware, so it sees the final status of
 * problem documents and of requests no route took.
 */
import type Koa from 'koa';
import type { ApiMetrics } from './api-deps.js';

/** Route label of a request no route took (404s, 405s, the extensions server's static files). */
export const unmatchedRoute = '(unmatched)';

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/** The middleware; `metrics` is told about each answer. */
export function requestMetrics(metrics: ApiMetrics): Koa.Middleware {
  const record = (context: Koa.Context, began: number): void => {
    const route = (context.state as { route?: string }).route ?? unmatchedRoute;
    // Any token may stand as a method; only the usual ones become label values.
    const method = knownMethods.has(context.method) ? context.method : 'OTHER';
    metrics.requestEnded(route, method, context.status, (performance.now() - began) / 1000);
  };
  // Not async: next()'s promise (koa-compose never throws, it rejects) gets the two handlers.
  return (context, next) => {
    const began = performance.now();
    return next().then(
      () => record(context, began),
      (error: unknown) => {
        record(context, began);
        throw error;
      },
    );
  };
}
