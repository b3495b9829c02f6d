import type Koa from 'koa';
import { RequestError } from '../errors.js';
import { discardBody, hasBody } from './unread-bodies.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/**
 * Parses JSON bodies (256 KiB at most). Errors raised while reading a body (a Content-Encoding
 * that does not decode, a truncated stream) are the client's: they answer 400, never 500.
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
      if (typeof status === 'number' && status >= 400 && status < 500) throw error;
      throw new RequestError(
        'bad-request',
        400,
        'The request body could not be read (check its Content-Encoding).',
      );
    }
    await next();
  };
  // A body no route reads (unread-bodies.ts): read and thrown away before the route answers.
  const discardThenNext: Koa.Middleware = async (context, next) => {
    try {
      await discardBody(context.req, maxBodyBytes);
    } catch (error) {
      // The rest of a refused body is not read: the connection ends after the answer.
      context.set('Connection', 'close');
      throw error;
    }
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
