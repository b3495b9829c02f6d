/**
 * API request series: `tagd_http_requests_total` and `tagd_http_request_duration_seconds`.
 * Labels are the route's template (never the path: tag paths and account names would make
 * unbounded series), the method and the status; each combination's children are bound once,
 * so a request costs one map lookup, one increment and one observation.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** Upper bounds of the request-duration buckets, s (a tag read takes well under 1 ms). */
export const requestDurationBuckets = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
];

/** What one request reports. */
export type RequestEnded = (route: string, method: string, status: number, seconds: number) => void;

/** Registers the request series; returns what the API middleware calls per answer. */
export function registerApiMetrics(registry: Registry): RequestEnded {
  const requests = new Counter({
    name: 'tagd_http_requests_total',
    help: 'Answered requests of the API listeners, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'tagd_http_request_duration_seconds',
    help: 'Time from a request reaching the API to its answer being ready, by route template and method, s.',
    labelNames: ['route', 'method'],
    buckets: requestDurationBuckets,
    registers: [registry],
  });
  // Bounded by routes × methods × statuses, all finite sets.
  const bound = new Map<string, { count: Counter.Internal; time: Histogram.Internal<string> }>();
  return (route, method, status, seconds) => {
    const key = `${route} ${method} ${status}`;
    let children = bound.get(key);
    if (children === undefined) {
      children = {
        count: requests.labels({ route, method, status: String(status) }),
        time: duration.labels({ route, method }),
      };
      bound.set(key, children);
    }
    children.count.inc();
    children.time.observe(seconds);
  };
}
