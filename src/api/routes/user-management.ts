import type { Logger } from 'pino';
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { maxPasswordLength } from '../../auth/password.js';
import { type RoleName, roleNames } from '../../auth/permissions.js';
import {
  reservedUsernames,
  type UserManagement,
  usernamePattern,
} from '../../auth/user-management.js';
import { ValidationError } from '../../errors.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const roleSchema = z.enum(roleNames as [RoleName, ...RoleName[]]);
const roles = z.array(roleSchema).min(1).max(roleNames.length);

/** An account as administrators see it: never a hash, secret or token. */
export const userAccountSchema = z
  .object({
    id: z.string(),
    username: z.string(),
    service: z.boolean().describe('A service account: no password, a generated token.'),
    roles: z.array(roleSchema),
    enabled: z.boolean(),
    requiresPasswordChange: z.boolean(),
    twoFactor: z.boolean().describe('Whether TOTP two-factor is enrolled.'),
    createdAt: z.string().describe('ISO 8601 UTC.'),
  })
  .meta({ id: 'UserAccount' });

/** Body of POST /api/v2/Users. */
export const newUserRequestSchema = z
  .strictObject({
    username: z
      .string()
      .regex(
        usernamePattern,
        "1 to 64 letters, digits, '_', '.', '@' or '-', not starting with '-'",
      )
      .describe(
        `Account name. Not one of ${reservedUsernames.join(', ')} (in any case): fixed routes live there.`,
      ),
    roles: roles.optional().describe('Default `["Viewers"]`.'),
    service: z.boolean().optional().describe('A service account (no password). Default false.'),
    password: z
      .string()
      .max(maxPasswordLength)
      .optional()
      .describe(
        "A user's password (at least 10 characters). Absent: one is generated, answered once as `oneTimePassword`, and must be changed at the first sign-in.",
      ),
    enabled: z.boolean().optional().describe('Default true.'),
  })
  .meta({ id: 'NewUserRequest' });

/** Body of PUT /api/v2/Users/{name}. */
export const userChangeRequestSchema = z
  .strictObject({
    roles: roles.optional().describe("Replaces the roles; the account's tokens stop working."),
    enabled: z.boolean().optional().describe("false: the account's tokens stop working at once."),
    service: z
      .boolean()
      .optional()
      .describe("Must equal the account's: an account does not change kind."),
    requiresPasswordChange: z
      .boolean()
      .optional()
      .describe(
        'true: the user must change the password at the next sign-in; current sign-ins end.',
      ),
  })
  .meta({ id: 'UserChangeRequest' });

const createdSchema = userAccountSchema
  .extend({
    oneTimePassword: z
      .string()
      .optional()
      .describe(
        'The generated password, shown only in this answer; it must be changed at first sign-in.',
      ),
  })
  .meta({ id: 'UserAccountCreated' });

/** `{name}` is never one of the fixed routes' names (they are reserved for accounts). */
function claimsName(params: Record<string, string>): boolean {
  const name = (params.name ?? '').toLowerCase();
  return !reservedUsernames.some((reserved) => reserved.toLowerCase() === name);
}

const nameParams = z.object({
  name: z.string().min(1).max(256).describe('Account name.'),
});

/** Users & Groups administration (`UserManage`, Administrators only). */
export function userManagementRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'UserManage' } as const;
  const management = (): UserManagement => {
    if (!deps.userManagement) throw new Error('the API was built without user management');
    return deps.userManagement;
  };
  // Every change is audited with who made it and from where.
  const auditOf = (principal: Principal | undefined, address: string | undefined): Logger =>
    deps.audit.child({ by: principal?.user.username, address });
  const addressOf = (context: { request: { socket: { remoteAddress?: string } } }) =>
    context.request.socket.remoteAddress ?? 'unknown';
  const tag = 'Users & Groups';
  const audited = 'Audited (`component: audit`), without passwords or tokens.';
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Users',
      operationId: 'listUsers',
      tag,
      summary: 'Every account',
      access,
      responses: {
        200: {
          description: 'The accounts, in creation order.',
          schema: z.object({ users: z.array(userAccountSchema) }).meta({ id: 'UserList' }),
        },
      },
      problems: [],
      handle: () => ({ users: management().list() }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users',
      operationId: 'createUser',
      tag,
      summary: 'Create an account',
      description: `A user without \`password\` gets a generated one, answered once. A service account gets its token from \`POST /api/v2/Users/{name}/Token\`. ${audited}`,
      access,
      body: newUserRequestSchema,
      responses: { 201: { description: 'Created.', schema: createdSchema } },
      problems: [400, 409],
      handle: async ({ body, principal, context }) => {
        const { account, oneTimePassword } = await management().create(
          {
            username: body.username,
            roles: body.roles ?? ['Viewers'],
            service: body.service ?? false,
            ...(body.password !== undefined ? { password: body.password } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          },
          auditOf(principal, addressOf(context)),
        );
        context.set('Location', `/api/v2/Users/${encodeURIComponent(account.username)}`);
        return { ...account, ...(oneTimePassword !== undefined ? { oneTimePassword } : {}) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/Users/{name}',
      operationId: 'getUser',
      tag,
      summary: 'One account',
      description: `\`${reservedUsernames.join('`, `')}\` are fixed routes, never account names.`,
      access,
      params: nameParams,
      claims: claimsName,
      responses: { 200: { description: 'The account.', schema: userAccountSchema } },
      problems: [404],
      handle: ({ params }) => management().get(params.name),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v2/Users/{name}',
      operationId: 'updateUser',
      tag,
      summary: 'Change roles, enabled, or require a password change',
      description: `Fields left out stay as they are. Disabling, a role change and requiring a password change end the account's sign-ins and void its tokens at once (a service token too). The last enabled administrator who can sign in cannot be disabled or demoted (409 \`last-administrator\`). ${audited}`,
      access,
      params: nameParams,
      claims: claimsName,
      body: userChangeRequestSchema,
      responses: { 200: { description: 'The account as changed.', schema: userAccountSchema } },
      problems: [400, 404, 409],
      handle: async ({ params, body, principal, context }) => {
        const service = management();
        const current = service.get(params.name);
        if (body.service !== undefined && body.service !== current.service) {
          throw new ValidationError('The request body is invalid.', [
            {
              path: 'service',
              message: 'An account does not change kind: create a new account instead.',
            },
          ]);
        }
        return service.update(
          params.name,
          {
            ...(body.roles !== undefined ? { roles: body.roles } : {}),
            ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
            ...(body.requiresPasswordChange !== undefined
              ? { requiresPasswordChange: body.requiresPasswordChange }
              : {}),
          },
          auditOf(principal, addressOf(context)),
        );
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v2/Users/{name}',
      operationId: 'deleteUser',
      tag,
      summary: 'Delete an account',
      description: `Its tokens stop working at once. The last enabled administrator who can sign in cannot be deleted (409 \`last-administrator\`). ${audited}`,
      access,
      params: nameParams,
      claims: claimsName,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404, 409],
      handle: async ({ params, principal, context }) => {
        await management().remove(params.name, auditOf(principal, addressOf(context)));
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/{name}/ResetPassword',
      operationId: 'resetUserPassword',
      tag,
      summary: "Reset a user's password to a one-time password",
      description: `Answers a generated password once; the user must change it at the next sign-in, and every token of the account stops working. Not for service accounts (400). ${audited}`,
      access,
      params: nameParams,
      claims: claimsName,
      responses: {
        200: {
          description: 'The one-time password.',
          schema: z
            .object({
              oneTimePassword: z.string().describe('Shown only in this answer.'),
            })
            .meta({ id: 'OneTimePassword' }),
        },
      },
      problems: [400, 404],
      handle: async ({ params, principal, context }) => {
        const { password } = await management().setPassword(
          params.name,
          undefined,
          auditOf(principal, addressOf(context)),
        );
        return { oneTimePassword: password };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Users/{name}/Token',
      operationId: 'generateServiceToken',
      tag,
      summary: "Generate a service account's token",
      description: `Answers the new token once (it never expires); the previous one stops working at once. Only for service accounts (400 otherwise). ${audited}`,
      access,
      params: nameParams,
      claims: claimsName,
      responses: {
        200: {
          description: 'The token.',
          schema: z
            .object({ token: z.string().describe('Bearer token, shown only in this answer.') })
            .meta({ id: 'ServiceToken' }),
        },
      },
      problems: [400, 404],
      handle: async ({ params, principal, context }) => ({
        token: await management().generateToken(
          params.name,
          auditOf(principal, addressOf(context)),
        ),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v2/Users/{name}/TwoFactor',
      operationId: 'removeUserTwoFactor',
      tag,
      summary: "Remove a user's two-factor (lost authenticator)",
      description: `The user signs in with the password alone until enrolled again (\`tagd users 2fa enable NAME\`); the account's tokens stop working. 204 also when none was enrolled. ${audited}`,
      access,
      params: nameParams,
      claims: claimsName,
      responses: { 204: { description: 'Removed (or there was none).' } },
      problems: [404],
      handle: async ({ params, principal, context }) => {
        await management().removeTwoFactor(params.name, auditOf(principal, addressOf(context)));
        context.status = 204;
      },
    }),
  ];
}
