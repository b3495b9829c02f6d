/**
 * API request series: `tagd_http_requests_total` and `tagd_http_request_duration_seconds`.
 * Labels are the route's template (never the path: tag paths and account names would make
 * unbounded series), the method and the status.
 *
 * Every request pays for these, so they are kept as plain numbers (three map lookups, a few
 * additions and a bucket search: about 0.1 µs) and turned into series only when scraped.
 * prom-client's own counter and histogram hash and validate the labels on every call, even
 * through `labels()`: 3 µs a request, some 5 % of an authenticated tag read's CPU.
 */
import { Counter, type Registry } from 'prom-client';

/** Upper bounds of the request-duration buckets, s (a tag read takes well under 1 ms). */
export const requestDurationBuckets = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10,
];

/** What one request reports. */
export type RequestEnded = (route: string, method: string, status: number, seconds: number) => void;

/** Running totals of one route and method. */
interface Timing {
  labels: { route: string; method: string };
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  buckets: number[];
  sum: number;
  count: number;
}

/** The count of one route, method and status. */
interface Counted {
  labels: Record<string, string>;
  count: number;
}

/** What a request updates: the timing of its route and method, and its status's count. */
interface RouteMethodSeries {
  timing: Timing;
  byStatus: Map<number, Counted>;
}

const durationName = 'tagd_http_request_duration_seconds';

/** Registers the request series; returns what the API middleware calls per answer. */
export function registerApiMetrics(registry: Registry): RequestEnded {
  // Bounded by routes × methods × statuses, all finite sets.
  const counts = new Map<string, Counted>();
  const timings = new Map<string, Timing>();
  // The same entries by route, then method: a request looks its series up with the strings it
  // has (the route's template and the parser's method are the same string objects every time,
  // their hashes cached) and its status, where a joined key would be a new string to hash.
  const byRoute = new Map<string, Map<string, RouteMethodSeries>>();
  new Counter({
    name: 'tagd_http_requests_total',
    help: 'Answered requests of the API listeners, by route template, method and status.',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of counts.values()) this.inc(labels, count);
    },
  });
  // A histogram in prom-client's exposition shape, filled from the plain numbers above.
  const duration = {
    name: durationName,
    help: 'Time from a request reaching the API to its answer being ready, by route template and method, s.',
    type: 'histogram',
    aggregator: 'sum',
    get() {
      const values: {
        labels: Record<string, string | number>;
        value: number;
        metricName: string;
      }[] = [];
      for (const timing of timings.values()) {
        let cumulative = 0;
        for (let i = 0; i < timing.buckets.length; i++) {
          cumulative += timing.buckets[i] as number;
          const le =
            i < requestDurationBuckets.length ? (requestDurationBuckets[i] as number) : '+Inf';
          values.push({
            labels: { ...timing.labels, le },
            value: cumulative,
            metricName: `${durationName}_bucket`,
          });
        }
        values.push({
          labels: timing.labels,
          value: timing.sum,
          metricName: `${durationName}_sum`,
        });
        values.push({
          labels: timing.labels,
          value: timing.count,
          metricName: `${durationName}_count`,
        });
      }
      return {
        name: durationName,
        help: duration.help,
        type: 'histogram',
        values,
        aggregator: 'sum',
      };
    },
    reset() {
      timings.clear();
      byRoute.clear();
    },
  };
  registry.registerMetric(duration as unknown as Parameters<Registry['registerMetric']>[0]);
  /** The series of a route and method seen first (or first since a reset). */
  const seriesOf = (route: string, method: string): RouteMethodSeries => {
    const timingKey = `${route} ${method}`;
    let timing = timings.get(timingKey);
    if (timing === undefined) {
      timing = {
        labels: { route, method },
        buckets: new Array(requestDurationBuckets.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      timings.set(timingKey, timing);
    }
    const series: RouteMethodSeries = { timing, byStatus: new Map() };
    let byMethod = byRoute.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      byRoute.set(route, byMethod);
    }
    byMethod.set(method, series);
    return series;
  };
  return (route, method, status, seconds) => {
    const series = byRoute.get(route)?.get(method) ?? seriesOf(route, method);
    let counted = series.byStatus.get(status);
    if (counted === undefined) {
      const countKey = `${route} ${method} ${status}`;
      counted = counts.get(countKey);
      if (counted === undefined) {
        counted = { labels: { route, method, status: String(status) }, count: 0 };
        counts.set(countKey, counted);
      }
      series.byStatus.set(status, counted);
    }
    counted.count++;
    const timing = series.timing;
    let bucket = 0;
    while (
      bucket < requestDurationBuckets.length &&
      seconds > (requestDurationBuckets[bucket] as number)
    ) {
      bucket++;
    }
    timing.buckets[bucket] = (timing.buckets[bucket] as number) + 1;
    timing.sum += seconds;
    timing.count++;
  };
}
