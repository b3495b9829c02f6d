import type Koa from 'koa';
import type { Context } from 'koa';
import { RequestError, ServiceBusyError, type TagdError } from '../errors.js';
import { bodyReservationBytes, largeBodyBudget } from './large-body-budget.js';
import { fromKoaError } from './problem.js';
import { discardBody, hasBody } from './unread-bodies.js';

/** Largest JSON request body a route accepts unless it sets its own limit: 256 KiB (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/**
 * Largest JSON request body of the configuration routes (a driver entry and its check, the
 * profile check, a collection): 16 MiB, room for a driver of some 90,000 Modbus tags (10,000
 * tags with a unit and a description are about 1.4 MB).
 */
export const configurationBodyBytes = 16 * 1024 * 1024;

/** The methods whose bodies are read as JSON (@koa/bodyparser's `parsedMethods` default). */
export const jsonBodyMethods: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

/** Marks in `context.state` that a route took the request, and so its body (read or not). */
const bodyTakenKey = Symbol('bodyTaken');

/**
 * The request envelope's part of the JSON bodies. A POST, PUT or PATCH body is not read here:
 * the route that serves the request reads it with {@link readJsonBody} after it authenticated
 * the caller and checked the permission (src/api/router.ts), up to the route's own limit, so a
 * client without a valid token cannot make the daemon buffer a byte of it (its answer, 401 or
 * 403, ends the connection: lingering-close.ts). A request no route takes (404, 405) has its
 * body read afterwards, within {@link maxBodyBytes}, and refused first if it cannot be read,
 * as when every body was read before routing.
 *
 * A body sent with any other method is read and discarded, within {@link maxBodyBytes}, before
 * the route runs (unread-bodies.ts); a request without a body goes on at once.
 */
export function jsonBodies(): Koa.Middleware {
  const readAfterRoutes: Koa.Middleware = async (context, next) => {
    let failure: { error: unknown } | undefined;
    try {
      await next();
    } catch (error) {
      failure = { error };
    }
    if (!bodyTaken(context) && hasBody(context.req)) {
      // No route took the request: its body is refused first, whatever the app answered.
      await readJsonBody(context, maxBodyBytes);
    }
    if (failure) throw failure.error;
  };
  // A body no route reads (unread-bodies.ts): read and thrown away before the route answers.
  // Over the limit, the rest is left unread: the connection ends after the 413.
  const discardThenNext: Koa.Middleware = async (context, next) => {
    await discardBody(context.req, maxBodyBytes);
    await next();
  };
  // Not async: a request without a body (every GET) passes with no frame of its own.
  return (context, next) =>
    jsonBodyMethods.has(context.method)
      ? readAfterRoutes(context, next)
      : hasBody(context.req)
        ? discardThenNext(context, next)
        : next();
}

/**
 * Reads the request's JSON body into `context.request.body` (`{}` for a body that is not
 * `application/json`, which the router then refuses with 415). Errors raised while reading (a
 * Content-Encoding that does not decode, a truncated stream) are the client's: 400, never 500.
 * The parser's module (co-body and its decoders, about 140 ms of CPU to load) is imported on
 * the first body read, not at start.
 * @param limitBytes most bytes of the body (decoded); the route's limit.
 * @throws RequestError 413 `payload-too-large` naming `limitBytes`, 400 `bad-request` (not
 *   JSON, not decodable, broken off).
 */
export async function readJsonBody(context: Context, limitBytes: number): Promise<void> {
  takeBody(context);
  if (limitBytes > maxBodyBytes) reserveLargeBody(context, limitBytes);
  const parse = await parserFor(limitBytes);
  try {
    await parse(context, async () => undefined);
  } catch (error) {
    throw refusalOf(error, limitBytes);
  }
}

/**
 * Reserves the body's bytes in the process's {@link largeBodyBudget} until the answer has gone
 * (the parsed document lives as long as the route handles it), or refuses the request unread.
 * @throws ServiceBusyError 503 `busy`, retry after 1 s, when the budget cannot hold the body.
 */
function reserveLargeBody(context: Context, limitBytes: number): void {
  const bytes = bodyReservationBytes(context.req.headers, limitBytes);
  const release = largeBodyBudget.tryReserve(bytes);
  if (release === undefined) {
    throw new ServiceBusyError(
      `The gateway is reading or handling other large request bodies (${sizeText(largeBodyBudget.totalBytes)} at most at once); try again in a moment.`,
      1,
    );
  }
  // 'close' follows the answer, or a connection lost before it: never held past the request.
  context.res.once('close', release);
}

/**
 * Tells the envelope that a route took the request: its body is the route's to read (with
 * {@link readJsonBody}, once the caller is checked) or to leave unread (a caller refused), and
 * is not read after the app answered.
 */
export function takeBody(context: Context): void {
  (context.state as Record<symbol, boolean>)[bodyTakenKey] = true;
}

function bodyTaken(context: Context): boolean {
  return (context.state as Record<symbol, boolean | undefined>)[bodyTakenKey] === true;
}

function refusalOf(error: unknown, limitBytes: number): TagdError {
  const status = (error as { status?: unknown }).status;
  if (status === 413) {
    return new RequestError(
      'payload-too-large',
      413,
      `The request body is larger than ${limitBytes} bytes (${sizeText(limitBytes)}), this route's limit.`,
    );
  }
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return fromKoaError(error) as TagdError;
  }
  return new RequestError(
    'bad-request',
    400,
    'The request body could not be read (check its Content-Encoding).',
  );
}

/** `262144` → `256 KiB`, `16777216` → `16 MiB`. */
export function sizeText(bytes: number): string {
  const mebibytes = bytes / (1024 * 1024);
  if (Number.isInteger(mebibytes)) return `${mebibytes} MiB`;
  const kibibytes = bytes / 1024;
  return Number.isInteger(kibibytes) ? `${kibibytes} KiB` : `${bytes} bytes`;
}

/** One parser per limit (the routes use two); the module is loaded once, on first use. */
const parsers = new Map<number, Promise<Koa.Middleware>>();

function parserFor(limitBytes: number): Promise<Koa.Middleware> {
  let parser = parsers.get(limitBytes);
  if (parser === undefined) {
    parser = import('@koa/bodyparser').then(
      ({ bodyParser }) =>
        bodyParser({
          enableTypes: ['json'],
          jsonLimit: limitBytes,
          encoding: 'utf-8',
          jsonStrict: true,
          parsedMethods: [...jsonBodyMethods],
        }) as Koa.Middleware,
    );
    parsers.set(limitBytes, parser);
  }
  return parser;
}
