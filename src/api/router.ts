import Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { AccountService } from '../auth/account-service.js';
import {
  RequestError,
  ServiceBusyError,
  TagdError,
  TooManyRequestsError,
  UnauthorizedError,
  ValidationError,
} from '../errors.js';
import { toFieldErrors } from '../profile/validate-profile.js';
import { authenticateRequest } from './authenticate.js';
import { jsonBodyMethods, maxBodyBytes, readJsonBody, takeBody } from './json-bodies.js';
import type { RouteDefinition } from './route.js';

/**
 * Builds the koa router for a list of route definitions: each request is authenticated per
 * the route's access rule (token and permission), then the JSON body of a POST, PUT or PATCH is
 * read, up to the route's `maxBodyBytes` (so no byte of it is buffered for a caller refused),
 * then path parameters, query and body are checked with the route's zod schemas (every wrong
 * field listed; a body that cannot be read is refused there too, and the route's `onInvalid`
 * is told), and the handler's result is the response.
 */
export function buildRouter(
  routes: readonly RouteDefinition[],
  accounts: AccountService,
  statusToken?: string,
): Router {
  const router = new Router();
  // Which definition each layer serves, for the routes that do not claim every match.
  const owners = new Map<unknown, RouteDefinition>();
  for (const route of routes) {
    const successStatus = Number(Object.keys(route.responses)[0] ?? 200);
    router[route.method](
      route.routerPath ?? koaPath(route.path),
      async (context: Context, next: () => Promise<unknown>) => {
        if (route.claims && !route.claims(context.params as Record<string, string>)) {
          return notClaimed(router, owners, context, next);
        }
        // The route's template, for the request metrics: a bounded label, unlike the path.
        context.state.route = route.path;
        // This route answers the request: its body is read after the caller is checked, or never.
        const readsBody = jsonBodyMethods.has(context.method);
        if (readsBody) takeBody(context);
        try {
          const principal = authenticateRequest(context, route.access, accounts, statusToken);
          let params: unknown;
          let query: unknown;
          let body: unknown;
          try {
            // After the caller: a body is buffered only for one who may call the route.
            if (readsBody) await readJsonBody(context, route.maxBodyBytes ?? maxBodyBytes);
            params = parse(route.params, context.params, 'path');
            // context.query parses the query string on first access: only for routes with one.
            query = route.query ? parse(route.query, context.query, 'query') : undefined;
            body = route.body ? parse(route.body, jsonBody(context), 'body') : undefined;
          } catch (error) {
            if (route.onInvalid && error instanceof TagdError) {
              route.onInvalid({ context, principal, error });
            }
            throw error;
          }
          const output = route.handle({ context, params, query, body, principal });
          // Most handlers answer synchronously: no microtask turn for them.
          const result = isThenable(output) ? await output : output;
          if (result !== undefined) {
            // A handler may pick another of its documented successes (PUT: 201 created, 200
            // replaced); anything else answers the first.
            if (context.status === successStatus || !(context.status in route.responses)) {
              context.status = successStatus;
            }
            setResponseBody(context, result);
          }
        } catch (error) {
          if (error instanceof UnauthorizedError) {
            context.set('WWW-Authenticate', 'Bearer realm="tagd"');
            route.onUnauthorized?.(context);
          }
          if (
            error instanceof TooManyRequestsError ||
            (error instanceof ServiceBusyError && error.retryAfterSeconds !== undefined)
          ) {
            context.set('Retry-After', String(error.retryAfterSeconds));
          }
          throw error;
        }
      },
    );
    owners.set(router.stack[router.stack.length - 1], route);
  }
  return router;
}

/** What koa answers a JSON body with when no JSON media type was set. */
const jsonMediaType = 'application/json; charset=utf-8';

/**
 * `context.body = result`, with a plain object or array serialized here, once: koa would
 * remove the Content-Length, look the `json` type up and test it, then serialize in respond and
 * compute the length; as a string with its Content-Type set the body only needs its length.
 * The bytes and headers are the same (a JSON media type the handler set is kept, as koa does).
 */
function setResponseBody(context: Context, result: unknown): void {
  if (typeof result === 'object' && result !== null && isPlainJson(result)) {
    const response = context.res;
    const type = response.getHeader('Content-Type');
    if (typeof type !== 'string' || !/\bjson\b/i.test(type)) {
      response.setHeader('Content-Type', jsonMediaType);
    }
    context.body = JSON.stringify(result);
    return;
  }
  context.body = result;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** A plain object or an array: what koa serializes as JSON (not a Buffer, stream, Blob…). */
function isPlainJson(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A request a matching route does not claim: answered as if that route did not exist. 405
 * with the methods of the routes that do claim the path, or, when none does, on to koa's 404.
 */
async function notClaimed(
  router: Router,
  owners: ReadonlyMap<unknown, RouteDefinition>,
  context: Context,
  next: () => Promise<unknown>,
): Promise<unknown> {
  const allowed = new Set<string>();
  for (const layer of router.stack) {
    if (!layer.match(context.path)) continue;
    const owner = owners.get(layer);
    if (owner?.claims) {
      const params = layer.params(context.path, layer.captures(context.path), {});
      if (!owner.claims(params as Record<string, string>)) continue;
    }
    for (const method of layer.methods) allowed.add(method);
  }
  if (allowed.size === 0 || allowed.has(context.method)) return next();
  context.status = 405;
  context.set('Allow', [...allowed].join(', '));
  return undefined;
}

/** `{name}` → `:name` (koa-router syntax). */
function koaPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function jsonBody(context: Context): unknown {
  if (!context.is('application/json')) {
    throw new RequestError(
      'unsupported-media-type',
      415,
      'The request body must be application/json.',
    );
  }
  return (context.request as { body?: unknown }).body;
}

function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (schema === undefined) return undefined as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.flatMap(toFieldErrors);
  throw new ValidationError(`The request ${where} is invalid.`, errors);
}
