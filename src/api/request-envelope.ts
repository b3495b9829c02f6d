import type Koa from 'koa';
import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { ApiMetrics } from './api-deps.js';
import { jsonBodies } from './json-bodies.js';
import { bodyLeftUnread, closeAfterAnswer } from './lingering-close.js';
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
 * middleware: the security headers (security-headers.ts), the JSON bodies (json-bodies.ts: a
 * route reads its own after checking the caller), then, once the rest of the app answered or
 * threw, a problem document for an error (problem.ts), a lingering close of the connection when
 * the answer leaves the body unread (lingering-close.ts), and last the request metrics
 * (request-metrics.ts), which so see the final status.
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
  const finish = (context: Context, began: number) => {
    // Answered with the body still arriving (refused, or its caller was): the connection ends.
    if (bodyLeftUnread(context.req)) closeAfterAnswer(context.req, context.res);
    if (metrics) recordRequest(metrics, context, began);
  };
  return (context, next) => {
    const began = metrics ? performance.now() : 0;
    setSecurityHeaders(context);
    // Neither koa-compose's next() nor the body parser throws: both reject.
    return bodies(context, next).then(
      () => {
        try {
          problems.settled(context);
        } finally {
          finish(context, began);
        }
      },
      (error: unknown) => {
        try {
          problems.failed(context, error);
        } finally {
          finish(context, began);
        }
      },
    );
  };
}
