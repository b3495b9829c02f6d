/**
 * One definition per API route, read both by the router (validation, authentication, handler)
 * and by the OpenAPI generator, so the document cannot drift from what is served.
 */
import type { Context } from 'koa';
import type { z } from 'zod';
import type { Principal } from '../auth/account-service.js';
import type { Permission } from '../auth/permissions.js';
import type { TagdError } from '../errors.js';

/** Who may call a route. */
export type RouteAccess =
  /** No token (sign-in, liveness, docs). */
  | { kind: 'public' }
  /**
   * An access or service token whose account holds the permission, unless `waived` says this
   * request needs none (`/metrics` from a loopback peer).
   */
  | { kind: 'permission'; permission: Permission; waived?: AccessWaiver }
  /** Any token of these types whose account is valid (refresh, password change). */
  | { kind: 'token'; types: readonly ('access' | 'refresh' | 'preauth' | 'service')[] }
  /**
   * The daemon's local status token (src/state/status-access.ts) as a Bearer token, and no
   * account token: `tagd status` on the daemon's own machine.
   */
  | { kind: 'status-token' };

/** When a permission route needs no token. */
export interface AccessWaiver {
  /** True when this request may go without a token; asked before any token is read. */
  applies(context: Context): boolean;
  /** When it applies, for the OpenAPI document. */
  description: string;
}

/** A documented response. */
export interface RouteResponse {
  description: string;
  /** Body schema; absent for responses without a JSON body. */
  schema?: z.ZodType;
  /** Media type when not JSON (e.g. text/html for Swagger UI). */
  mediaType?: string;
}

/** What a handler receives: parsed and validated input, and the caller. */
export interface RouteInput<Params, Query, Body> {
  context: Context;
  params: Params;
  query: Query;
  body: Body;
  /** The caller; undefined only on public routes. */
  principal: Principal | undefined;
}

/** A request refused for its input after its caller was authenticated. */
export interface InvalidRequest {
  context: Context;
  /** The caller; undefined only on public routes. */
  principal: Principal | undefined;
  /**
   * Why: a ValidationError (400 `validation-failed`, the wrong fields in `errors`) for path
   * parameters, query or body against the route's schemas, or a RequestError for a body that
   * could not be read (400 `bad-request`, 413 `payload-too-large`, 415
   * `unsupported-media-type`).
   */
  error: TagdError;
}

/** An API route. */
export interface RouteDefinition<Params = unknown, Query = unknown, Body = unknown> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI path, e.g. `/api/v2/Tags/Sample/{fullTagPath}`. */
  path: string;
  /** koa-router path when it differs (a parameter that may hold slashes: `{*fullTagPath}`). */
  routerPath?: string;
  operationId: string;
  /** OpenAPI tag grouping the route in Swagger UI. */
  tag: string;
  summary: string;
  description?: string;
  access: RouteAccess;
  params?: z.ZodType<Params>;
  query?: z.ZodType<Query>;
  body?: z.ZodType<Body>;
  /**
   * Largest JSON body of a POST, PUT or PATCH, bytes (decoded); beyond, 413
   * `payload-too-large` naming it. Read only once the caller is authenticated and holds the
   * permission. Default `maxBodyBytes` of json-bodies.ts, 256 KiB; the configuration routes
   * take `configurationBodyBytes`, 16 MiB.
   */
  maxBodyBytes?: number;
  /** Success responses by status. */
  responses: Record<number, RouteResponse>;
  /**
   * Whether this route serves a request its path matches, given the path parameters. false
   * leaves the request to the other routes, as if this one did not match: `Users/{name}` does
   * not claim `Users/Refresh` and the other fixed routes, so those keep answering 405 to a
   * method they lack. Default: every match.
   */
  claims?(params: Record<string, string>): boolean;
  /** Statuses answered with a problem document (401/403/415/413/429 are added from `access` and `body`). */
  problems: number[];
  handle(input: RouteInput<Params, Query, Body>): unknown | Promise<unknown>;
  /**
   * Called when an authenticated request is refused for its input (its body unreadable, or its
   * path parameters, query or body against the schemas), before the refusal is answered;
   * `handle` never runs. Tags/Write audits such refusals. Must not throw.
   */
  onInvalid?(refusal: InvalidRequest): void;
  /**
   * Called when the request is refused with 401 (before `handle`, which then never runs), to
   * add headers to that answer: SignOut clears a dead browser session's cookies this way.
   */
  onUnauthorized?(context: Context): void;
}

/** Keeps the type parameters of a route while storing routes in one list. */
export function defineRoute<Params, Query, Body>(
  route: RouteDefinition<Params, Query, Body>,
): RouteDefinition<unknown, unknown, unknown> {
  return route as unknown as RouteDefinition<unknown, unknown, unknown>;
}
