import type Koa from 'koa';
import type { Context } from 'koa';
import { RequestError, type TagdError } from '../errors.js';
import { fromKoaError } from './problem.js';
import { discardBody, hasBody } from './unread-bodies.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/** Where a body's refusal waits in `context.state` for the route to take it. */
const bodyRefusalKey = Symbol('bodyRefusal');

/**
 * Parses JSON bodies (256 KiB at most). Errors raised while reading a body (a Content-Encoding
 * that does not decode, a truncated stream) are the client's: they answer 400, never 500.
 *
 * A body that cannot be read (not JSON, over the limit, not decodable) is refused by the route
 * the request reaches, after that route authenticated the caller (src/api/router.ts takes it
 * with {@link takeBodyRefusal}): a client without a valid token learns only that (401), and a
 * route can audit the refusal under the account that sent it (Tags/Write does). A request no
 * route takes is refused for its body as before, whatever the rest of the app answered.
 *
 * Only the methods the parser reads bodies of (POST, PUT, PATCH) reach it. A body sent with any
 * other method is read and discarded, within the same 256 KiB, before the route runs
 * (unread-bodies.ts); a request without a body goes on at once. The parser's module (co-body
 * and its decoders, about 140 ms of CPU to load) is imported on the first request it parses,
 * not at start.
 */
export function jsonBodies(): Koa.Middleware {
  let parser: Promise<Koa.Middleware> | undefined;
  const parseThenNext: Koa.Middleware = async (context, next) => {
    parser ??= loadBodyParser();
    const parse = await parser;
    try {
      await parse(context, async () => undefined);
    } catch (error) {
      const status = (error as { status?: unknown }).status;
      const refusal =
        typeof status === 'number' && status >= 400 && status < 500
          ? (fromKoaError(error) as TagdError)
          : new RequestError(
              'bad-request',
              400,
              'The request body could not be read (check its Content-Encoding).',
            );
      return refusedUnlessTaken(context, next, refusal);
    }
    await next();
  };
  // A body no route reads (unread-bodies.ts): read and thrown away before the route answers.
  // Over the limit, the rest is left unread: the connection ends after the 413.
  const discardThenNext: Koa.Middleware = async (context, next) => {
    await discardBody(context.req, maxBodyBytes);
    await next();
  };
  // Not async: a request without a body (every GET) passes with no frame of its own.
  return (context, next) =>
    parsedMethods.has(context.method)
      ? parseThenNext(context, next)
      : hasBody(context.req)
        ? discardThenNext(context, next)
        : next();
}

/** The methods whose bodies @koa/bodyparser reads (its `parsedMethods` default). */
const parsedMethods: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

async function loadBodyParser(): Promise<Koa.Middleware> {
  const { bodyParser } = await import('@koa/bodyparser');
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: maxBodyBytes,
    encoding: 'utf-8',
    jsonStrict: true,
    parsedMethods: [...parsedMethods],
  }) as Koa.Middleware;
}

/**
 * The refusal of the request's body, if it could not be read, for the route that serves the
 * request: taken once (the body parser then leaves the answer to the route).
 */
export function takeBodyRefusal(context: Context): TagdError | undefined {
  const state = context.state as Record<symbol, TagdError | undefined>;
  const refusal = state[bodyRefusalKey];
  if (refusal !== undefined) state[bodyRefusalKey] = undefined;
  return refusal;
}

/** Runs the app with the body's refusal waiting for a route; unless one took it, throws it. */
async function refusedUnlessTaken(
  context: Context,
  next: Koa.Next,
  refusal: TagdError,
): Promise<void> {
  const state = context.state as Record<symbol, TagdError | undefined>;
  state[bodyRefusalKey] = refusal;
  try {
    await next();
  } catch (error) {
    // No route took the request (a 404 or 405 of the rest of the app): the body comes first.
    if (state[bodyRefusalKey] === refusal) throw refusal;
    throw error;
  }
  if (state[bodyRefusalKey] === refusal) throw refusal;
}
