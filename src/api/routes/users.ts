import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Context } from 'koa';
import { z } from 'zod';
import type { SignInResponse } from '../../auth/account-service.js';
import { maxPasswordLength } from '../../auth/password.js';
import { permissions, roleNames } from '../../auth/permissions.js';
import type { ApiDeps } from '../api-deps.js';
import { csrfCookie, refreshCookie, sessionCookie } from '../authenticate.js';
import { qrSvg } from '../qr-svg.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const username = z.string().min(1).max(64).describe('Account name.');
const password = z.string().min(1).max(maxPasswordLength);

/** Body of POST /api/v2/Users/Authenticate. */
export const signInRequestSchema = z
  .strictObject({ username, password: password.describe('The account password.') })
  .meta({ id: 'SignInRequest' });

/** The sign-in response (spec §2.1). */
export const signInResponseSchema = z
  .object({
    token: z
      .string()
      .optional()
      .describe(
        'Bearer access token. Absent while a pre-auth step is pending, and for cookie sessions.',
      ),
    refreshToken: z
      .string()
      .optional()
      .describe(
        'Refresh token (rotates on use). Omitted for service accounts and cookie sessions.',
      ),
    username: z.string(),
    id: z.string(),
    permissions: z.array(z.enum(permissions)),
    preAuthToken: z
      .string()
      .optional()
      .describe(
        'Present instead of token when two-factor or a password change must be completed first.',
      ),
    requiresTwoFactor: z.boolean().optional(),
    requiresPasswordChange: z.boolean().optional(),
  })
  .meta({ id: 'SignInResponse' });

/** Body of POST /api/v2/Users/Authenticate/TwoFactor. */
export const twoFactorRequestSchema = z
  .strictObject({
    preAuthToken: z.string().min(1).max(4096),
    code: z
      .string()
      .regex(/^\d{6}$/, 'must be 6 digits')
      .describe('Current TOTP code.'),
  })
  .meta({ id: 'TwoFactorRequest' });

/** Body of POST /api/v2/Users/Current/ChangePassword. */
export const changePasswordRequestSchema = z
  .strictObject({
    currentPassword: password,
    newPassword: password.describe('At least 10 characters.'),
  })
  .meta({ id: 'ChangePasswordRequest' });

const totpCode = z
  .string()
  .regex(/^\d{6}$/, 'must be 6 digits')
  .describe('Current code of the authenticator app.');

/** Answer of GET /api/v2/Users/Current. */
export const currentUserSchema = z
  .object({
    username: z.string(),
    id: z.string(),
    kind: z
      .enum(['user', 'service'])
      .describe('`service`: signs in only with a generated token (no password, no two-factor).'),
    roles: z.array(z.enum(roleNames)),
    permissions: z.array(z.enum(permissions)),
    twoFactor: z.boolean().describe('Whether TOTP two-factor is enrolled.'),
    twoFactorPending: z
      .boolean()
      .describe('Whether a self-service enrolment was started and awaits its first code.'),
    theme: z.string().nullable().describe('The chosen console theme; null: the default.'),
    version: z.string().describe("tagd's version."),
    hostName: z.string().describe('Host name of the machine tagd runs on.'),
  })
  .meta({ id: 'CurrentUser' });

/** Body of POST /api/v2/Users/Current/TwoFactor. */
export const startTwoFactorRequestSchema = z
  .strictObject({ password: password.describe('The account password.') })
  .meta({ id: 'StartTwoFactorRequest' });

/** Answer of POST /api/v2/Users/Current/TwoFactor: what an authenticator app enrols from. */
export const pendingTwoFactorSchema = z
  .object({
    uri: z
      .string()
      .describe('The `otpauth://` URI (its `secret` parameter can be typed in by hand).'),
    qrCodeSvg: z.string().describe('The URI as a QR code, a standalone SVG document.'),
    expiresAt: z.string().describe('When the pending enrolment expires unconfirmed (ISO 8601).'),
  })
  .meta({ id: 'PendingTwoFactor' });

/** Body of POST /api/v2/Users/Current/TwoFactor/Confirm. */
export const confirmTwoFactorRequestSchema = z
  .strictObject({ code: totpCode })
  .meta({ id: 'ConfirmTwoFactorRequest' });

/** Body of POST /api/v2/Users/Current/TwoFactor/Remove. */
export const removeTwoFactorRequestSchema = z
  .strictObject({ password: password.describe('The account password.'), code: totpCode })
  .meta({ id: 'RemoveOwnTwoFactorRequest' });

const cookieQuery = z.object({
  useCookies: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: a browser session in HttpOnly cookies; the body carries no token.'),
});

const signedIn = {
  200: { description: 'Signed in, or a pre-auth step is pending.', schema: signInResponseSchema },
};

/** Sign-in, two-factor, password change, refresh and sign-out. */
export function userRoutes(deps: ApiDeps): RouteDefinition[] {
  const { accounts } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/Authenticate',
      operationId: 'authenticate',
      tag: 'Users',
      summary: 'Sign in with username and password',
      description:
        'Over a network use HTTPS. Failed sign-ins are limited per account and per address (429 with Retry-After).',
      access: { kind: 'public' },
      query: cookieQuery,
      body: signInRequestSchema,
      responses: signedIn,
      problems: [400, 401, 429],
      handle: async ({ context, body, query }) =>
        respond(
          context,
          await accounts.signIn(body.username, body.password, addressOf(context)),
          query,
          deps,
        ),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/Authenticate/TwoFactor',
      operationId: 'authenticateTwoFactor',
      tag: 'Users',
      summary: 'Complete two-factor with a TOTP code',
      description: 'A code is accepted once; five wrong codes void the preAuthToken.',
      access: { kind: 'public' },
      query: cookieQuery,
      body: twoFactorRequestSchema,
      responses: signedIn,
      problems: [400, 401],
      handle: async ({ context, body, query }) =>
        respond(
          context,
          await accounts.completeTwoFactor(body.preAuthToken, body.code, addressOf(context)),
          query,
          deps,
        ),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/Current/ChangePassword',
      operationId: 'changePassword',
      tag: 'Users',
      summary: 'Change the password (required or voluntary)',
      description:
        'Authorized by a preAuthToken or an access token. Every older token of the account stops working.',
      access: { kind: 'token', types: ['preauth', 'access'] },
      query: cookieQuery,
      body: changePasswordRequestSchema,
      responses: signedIn,
      problems: [400, 401, 429],
      handle: async ({ context, body, query, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const result = await accounts.changePassword(
          principal,
          body.currentPassword,
          body.newPassword,
          addressOf(context),
        );
        return respond(context, result, query, deps);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Users/Current',
      operationId: 'getCurrentUser',
      tag: 'Users',
      summary: 'The signed-in account, and the gateway it is signed in to',
      description:
        "Who the token belongs to (roles, permissions, two-factor, theme), and tagd's version and host name, which the console shows in its header.",
      access: { kind: 'token', types: ['access', 'service'] },
      responses: { 200: { description: 'The account.', schema: currentUserSchema } },
      problems: [],
      handle: ({ principal }): z.infer<typeof currentUserSchema> => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const { user } = principal;
        return {
          username: user.username,
          id: user.id,
          kind: user.kind,
          roles: [...user.roles],
          permissions: [...principal.permissions],
          twoFactor: user.twoFactor !== undefined,
          twoFactorPending: accounts.enrolmentPending(principal),
          theme: user.theme ?? null,
          version: deps.version,
          hostName: hostname(),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/Current/TwoFactor',
      operationId: 'startOwnTwoFactor',
      tag: 'Users',
      summary: 'Start enrolling two-factor for the signed-in account',
      description:
        'Checks the password (a wrong one counts as a failed sign-in), then keeps a new TOTP secret pending for 10 minutes and answers it as an `otpauth://` URI and a QR code. Nothing changes until `…/TwoFactor/Confirm` gets a code from it; a new start replaces a pending one. An account with two-factor must remove it first. Service accounts are refused (403). Audited.',
      access: { kind: 'token', types: ['access'] },
      body: startTwoFactorRequestSchema,
      responses: {
        200: { description: 'Pending until confirmed.', schema: pendingTwoFactorSchema },
      },
      problems: [400, 403, 409, 429],
      handle: async ({ context, body, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const pending = await accounts.startTwoFactorEnrolment(
          principal,
          body.password,
          addressOf(context),
        );
        return {
          uri: pending.uri,
          qrCodeSvg: qrSvg(pending.uri),
          expiresAt: new Date(pending.expiresAt).toISOString(),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/Current/TwoFactor/Confirm',
      operationId: 'confirmOwnTwoFactor',
      tag: 'Users',
      summary: 'Confirm a two-factor enrolment with a code',
      description:
        "A code from the pending secret enrols it. Then, as with `tagd users 2fa enable`, every earlier token of the account stops working (other browsers and clients sign in again, with a code); the caller gets a new sign-in in the answer (or, with useCookies, new cookies), so the console that enrolled stays signed in. The code's time step counts as used. Wrong codes count as failed sign-ins; five void the enrolment.",
      access: { kind: 'token', types: ['access'] },
      query: cookieQuery,
      body: confirmTwoFactorRequestSchema,
      responses: signedIn,
      problems: [400, 403, 409, 429],
      handle: async ({ context, body, query, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const result = await accounts.confirmTwoFactorEnrolment(
          principal,
          body.code,
          addressOf(context),
        );
        return respond(context, result, query, deps);
      },
    }),
    defineRoute({
      // POST, not DELETE: a DELETE's body is never read here (unread-bodies.ts), and the password
      // and code must not travel in the URL or headers, where proxies and logs keep them.
      method: 'post',
      path: '/api/v2/Users/Current/TwoFactor/Remove',
      operationId: 'removeOwnTwoFactor',
      tag: 'Users',
      summary: "Remove the signed-in account's two-factor",
      description:
        "Takes the password and a current code (a lost authenticator is an administrator's `DELETE /api/v2/Users/{name}/TwoFactor`). Every earlier token of the account stops working; the caller gets a new sign-in as on Confirm. Wrong passwords and codes count as failed sign-ins. Audited.",
      access: { kind: 'token', types: ['access'] },
      query: cookieQuery,
      body: removeTwoFactorRequestSchema,
      responses: signedIn,
      problems: [400, 403, 409, 429],
      handle: async ({ context, body, query, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const result = await accounts.removeOwnTwoFactor(
          principal,
          body.password,
          body.code,
          addressOf(context),
        );
        return respond(context, result, query, deps);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Users/Refresh',
      operationId: 'refresh',
      tag: 'Users',
      summary: 'Renew a token',
      description:
        'With a still-valid access token: a new access token. With a refresh token: a new access and refresh token; a refresh token used twice revokes its sign-in, access tokens included. Renewed tokens keep their sign-in and never outlive it: a sign-in ends `security.sessionLifetimeHours` (default 168) after its password was checked, whatever is renewed; then sign in again.',
      access: { kind: 'token', types: ['access', 'refresh'] },
      responses: { 200: { description: 'Renewed.', schema: signInResponseSchema } },
      problems: [401],
      handle: async ({ context }) => {
        const token = bearerOrCookie(context);
        const result = await accounts.refresh(token);
        const viaCookie = !context.get('Authorization');
        return respond(context, result, { useCookies: viaCookie ? 'true' : undefined }, deps);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/SignOut',
      operationId: 'signOut',
      tag: 'Users',
      summary: 'Sign out: end this sign-in',
      description:
        "Revokes the caller's sign-in: every access and refresh token of it stops working at once; the account's other sign-ins go on. A cookie session is identified by its refresh cookie (sent here too, so a browser whose access cookie expired can still sign out) or its session cookie, must send X-CSRF-Token as on every unsafe method, and gets its cookies cleared, also when answered 401 (its sign-in had already ended). Service tokens belong to no sign-in and are refused.",
      access: { kind: 'token', types: ['access', 'refresh'] },
      responses: { 204: { description: 'Signed out.' } },
      problems: [401],
      handle: async ({ context, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        await accounts.signOut(principal, addressOf(context));
        if (!context.get('Authorization')) clearCookies(context);
        context.status = 204;
      },
      // A browser whose sign-in already ended (expired, revoked, signed out elsewhere) would
      // otherwise keep dead cookies it cannot remove itself (they are HttpOnly).
      onUnauthorized: (context) => {
        if (!context.get('Authorization') && hasSessionCookie(context)) clearCookies(context);
      },
    }),
  ];
}

/** Expires the session, refresh and CSRF cookies, each on the path it was set with. */
function clearCookies(context: Context): void {
  const common = { sameSite: 'strict', secure: context.secure } as const;
  context.cookies.set(sessionCookie, null, { ...common, httpOnly: true, path: '/' });
  context.cookies.set(refreshCookie, null, {
    ...common,
    httpOnly: true,
    path: refreshCookiePath,
  });
  clearLegacyRefreshCookie(context);
  context.cookies.set(csrfCookie, null, { ...common, httpOnly: false, path: '/' });
}

function hasSessionCookie(context: Context): boolean {
  return [sessionCookie, refreshCookie, csrfCookie].some((name) =>
    Boolean(context.cookies.get(name)),
  );
}

// The browser sends the refresh token only to the Users routes: Refresh, and SignOut, which
// must end a sign-in whose access cookie has expired. The other Users routes ignore it (they
// are public or take the session cookie), and no data route is under this path.
const refreshCookiePath = '/api/v2/Users/';

// Earlier versions set the refresh cookie on this narrower path. A browser holding such a
// cookie sends it to Refresh before the new one (longer paths come first), so once rotated it
// would be replayed and revoke the sign-in: every response that sets or clears the refresh
// cookie expires the old one too.
const legacyRefreshCookiePath = '/api/v2/Users/Refresh';

function clearLegacyRefreshCookie(context: Context): void {
  context.cookies.set(refreshCookie, null, {
    sameSite: 'strict',
    secure: context.secure,
    httpOnly: true,
    path: legacyRefreshCookiePath,
  });
}

function bearerOrCookie(context: Context): string {
  const header = context.get('Authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return (
    match?.[1] ?? context.cookies.get(refreshCookie) ?? context.cookies.get(sessionCookie) ?? ''
  );
}

/** Answers a sign-in result in the body, or, for browsers, as cookies with no token in the body. */
function respond(
  context: Context,
  result: SignInResponse,
  query: { useCookies?: 'true' | 'false' | undefined },
  deps: ApiDeps,
): SignInResponse {
  if (query.useCookies !== 'true' || result.token === undefined) return result;
  const secure = context.secure;
  const { token, refreshToken, ...rest } = result;
  const now = (deps.now ?? Date.now)();
  // Each cookie lasts as long as its token, so none outlives the sign-in's deadline either.
  const lifetime = (value: string) => Math.max(0, deps.accounts.tokenExpiresAt(value) - now);
  context.cookies.set(sessionCookie, token, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: lifetime(token),
  });
  if (refreshToken) {
    context.cookies.set(refreshCookie, refreshToken, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: refreshCookiePath,
      maxAge: lifetime(refreshToken),
    });
    clearLegacyRefreshCookie(context);
  }
  // Readable by the page's script, which echoes it in X-CSRF-Token (double submit).
  context.cookies.set(csrfCookie, randomBytes(24).toString('base64url'), {
    httpOnly: false,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: Math.max(0, deps.accounts.signInEndsAt(token) - now),
  });
  return rest;
}

function addressOf(context: Context): string {
  return context.request.socket.remoteAddress ?? 'unknown';
}
