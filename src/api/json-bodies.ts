import type Koa from 'koa';
import { RequestError } from '../errors.js';

/** Largest JSON request body accepted (413 beyond). */
export const maxBodyBytes = 256 * 1024;

/**
 * Parses JSON bodies (256 KiB at most). Errors raised while reading a body (a Content-Encoding
 * that does not decode, a truncated stream) are the client's: they answer 400, never 500.
 *
 * Only the methods the parser reads bodies of (POST, PUT, PATCH) reach it; every other request
 * goes on as the parser itself would let it. The parser's module (co-body and its decoders,
 * about 140 ms of CPU to load) is imported on the first such request, not at start.
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
  // Not async: a request without a body (every GET) passes with no frame of its own.
  return (context, next) =>
    parsedMethods.has(context.method) ? parseThenNext(context, next) : next();
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
