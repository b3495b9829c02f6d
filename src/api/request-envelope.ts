import type Koa from 'koa';
import type { Logger } from 'pino';
import type { ApiMetrics } from './api-deps.js';
import { jsonBodies } from './json-bodies.js';
import { problemAnswers } from './problem.js';
import { recordRequest } from './request-metrics.js';
import { setSecurityHeaders } from './security-headers.js';

/** What {@link requestEnvelope} needs. */
export interface RequestEnvelopeOptions {
  /** Logs requests that failed with 500 (with their stack, which the client never sees). */
  logger: Logger;
  /** Told about every answer; none: no request metrics. */
  metrics?: ApiMetrics;
}

/**
 * What every request of an API app goes through before and after the routes, as one koa
 * middleware: the security headers (security-headers.ts), the JSON body of a POST, PUT or
 * PATCH (json-bodies.ts), then, once the rest of the app answered or threw, a problem
 * document for an error (problem.ts), and last the request metrics (request-metrics.ts), which
 * so see the final status.
 *
 * One middleware rather than four, because koa runs each middleware through a compose step
 * and a promise of its own, on every request (issue 15: a tag read costs a few microseconds
 * of CPU in all, and each of those steps is a measurable part of it). The order is the one
 * the four middlewares had.
 */
export function requestEnvelope(options: RequestEnvelopeOptions): Koa.Middleware {
  const problems = problemAnswers(options.logger);
  const bodies = jsonBodies();
  const metrics = options.metrics;
  return (context, next) => {
    const began = metrics ? performance.now() : 0;
    setSecurityHeaders(context);
    // Neither koa-compose's next() nor the body parser throws: both reject.
    return bodies(context, next).then(
      () => {
        try {
          problems.settled(context);
        } finally {
          if (metrics) recordRequest(metrics, context, began);
        }
      },
      (error: unknown) => {
        try {
          problems.failed(context, error);
        } finally {
          if (metrics) recordRequest(metrics, context, began);
        }
      },
    );
  };
}
