/**
 * Counts every answer of an app and times it, labelled by route template, method and status
 * (see {@link ApiMetrics.requestEnded}). Called last for each request (request-envelope.ts), so
 * it sees the final status of problem documents and of requests no route took.
 */
import type Koa from 'koa';
import type { ApiMetrics } from './api-deps.js';

/** Route label of a request no route took (404s, 405s, the extensions server's static files). */
export const unmatchedRoute = '(unmatched)';

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);

/**
 * Tells `metrics` about an answer: its route template (set by the router), method and final
 * status, and the time since `began` (`performance.now()` when the request arrived, ms).
 */
export function recordRequest(metrics: ApiMetrics, context: Koa.Context, began: number): void {
  const route = (context.state as { route?: string }).route ?? unmatchedRoute;
  // Any token may stand as a method; only the usual ones become label values.
  const method = knownMethods.has(context.method) ? context.method : 'OTHER';
  metrics.requestEnded(route, method, context.status, (performance.now() - began) / 1000);
}
