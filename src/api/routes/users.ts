import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { z } from 'zod';
import type { SignInResponse } from '../../auth/account-service.js';
import { maxPasswordLength } from '../../auth/password.js';
import { permissions } from '../../auth/permissions.js';
import type { ApiDeps } from '../app.js';
import { csrfCookie, refreshCookie, sessionCookie } from '../authenticate.js';
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

const cookieQuery = z.object({
  useCookies: z
    .enum(['true', 'false'])
    .optional()
    .describe('true: a browser session in HttpOnly cookies; the body carries no token.'),
});

const signedIn = {
  200: { description: 'Signed in, or a pre-auth step is pending.', schema: signInResponseSchema },
};

/** Sign-in, two-factor, password change and refresh. */
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
      path: '/api/v2/Users/Refresh',
      operationId: 'refresh',
      tag: 'Users',
      summary: 'Renew a token',
      description:
        'With a still-valid access token: a new access token. With a refresh token: a new access and refresh token; a refresh token used twice revokes its family.',
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
  ];
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
  const lifetime = (type: 'access' | 'refresh') => deps.accounts.tokenLifetimeSeconds(type) * 1000;
  context.cookies.set(sessionCookie, token, {
    httpOnly: true,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: lifetime('access'),
  });
  if (refreshToken) {
    context.cookies.set(refreshCookie, refreshToken, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: '/api/v2/Users/Refresh',
      maxAge: lifetime('refresh'),
    });
  }
  // Readable by the page's script, which echoes it in X-CSRF-Token (double submit).
  context.cookies.set(csrfCookie, randomBytes(24).toString('base64url'), {
    httpOnly: false,
    sameSite: 'strict',
    secure,
    path: '/',
    maxAge: lifetime('refresh'),
  });
  return rest;
}

function addressOf(context: Context): string {
  return context.request.socket.remoteAddress ?? 'unknown';
}
