import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { AccountService, Principal } from '../auth/account-service.js';
import { ForbiddenError, UnauthorizedError } from '../errors.js';
import { statusTokenMatches } from '../state/status-access.js';
import type { RouteAccess } from './route.js';

/** Cookie holding a browser session's access token (HttpOnly). */
export const sessionCookie = 'tagd_session';
/** Cookie holding a browser session's refresh token (HttpOnly, only sent to the Users routes). */
export const refreshCookie = 'tagd_refresh';
/** Cookie holding the CSRF token a browser must echo in {@link csrfHeader} on unsafe requests. */
export const csrfCookie = 'tagd_csrf';
/** Header carrying the CSRF token. */
export const csrfHeader = 'X-CSRF-Token';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Resolves the caller of a request for a route's access rule: the Bearer token, or the
 * session cookie of a browser client (which must echo the CSRF cookie on unsafe methods).
 * @param statusToken the daemon's local status token; without it, status-token routes refuse
 *   every request.
 * @returns undefined for public routes, status-token routes, and when the route's waiver
 *   applies.
 * @throws UnauthorizedError (401), ForbiddenError (403)
 */
export function authenticateRequest(
  context: Context,
  access: RouteAccess,
  accounts: AccountService,
  statusToken?: string,
): Principal | undefined {
  if (access.kind === 'public') return undefined;
  if (access.kind === 'permission' && access.waived?.applies(context)) return undefined;
  if (access.kind === 'status-token') {
    // The header only: a browser's session cookie is an account's, never the status token.
    const match = /^Bearer\s+(\S+)\s*$/i.exec(context.get('Authorization'));
    if (statusToken === undefined || !match?.[1] || !statusTokenMatches(statusToken, match[1])) {
      throw new UnauthorizedError('This route needs the local status token (tagd status).');
    }
    return undefined;
  }
  const { token, fromCookie } = credentialOf(context, access);
  if (token === undefined) throw new UnauthorizedError('A Bearer token is required.');
  const types = access.kind === 'permission' ? (['access', 'service'] as const) : access.types;
  // Authenticate first: a dead session must hear 401 (sign in again), not a CSRF complaint.
  const principal = accounts.authenticate(token, types);
  if (fromCookie && !safeMethods.has(context.method)) checkCsrf(context);
  if (access.kind === 'permission' && !principal.permissions.has(access.permission)) {
    throw new ForbiddenError(`This route needs the ${access.permission} permission.`);
  }
  return principal;
}

function credentialOf(
  context: Context,
  access: RouteAccess,
): { token?: string; fromCookie: boolean } {
  // The raw header, as context.get('Authorization') reads it, without koa's delegation.
  const header = context.req.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedError('The Authorization header must be "Bearer <token>".');
    return { token: match[1], fromCookie: false };
  }
  // Refresh and SignOut read the refresh cookie first (it outlives the session cookie); every
  // other route reads the session cookie.
  const wantsRefresh = access.kind === 'token' && access.types.includes('refresh');
  const cookie =
    (wantsRefresh ? context.cookies.get(refreshCookie) : undefined) ??
    context.cookies.get(sessionCookie);
  return { token: cookie || undefined, fromCookie: Boolean(cookie) };
}

function checkCsrf(context: Context): void {
  const expected = context.cookies.get(csrfCookie) ?? '';
  const sent = context.get(csrfHeader);
  // Digests have equal lengths whatever was sent (header bytes need not be UTF-8), so the
  // comparison is constant-time and cannot throw.
  const valid = expected.length > 0 && timingSafeEqual(digest(sent), digest(expected));
  if (!valid) {
    throw new ForbiddenError(
      `A cookie session must send the ${csrfHeader} header on this request.`,
      'csrf-failed',
    );
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'latin1').digest();
}
