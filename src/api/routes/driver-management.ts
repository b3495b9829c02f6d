/**
 * Devices over the API (`DriverManage`, Administrators): add, read, replace and remove a
 * driver's profile entry under `/api/v2/Drivers`. The body is the driver's entry exactly as in
 * the profile (`drivers[]`), validated with the same schema; the change is saved through the
 * ProfileService (atomically, secrets sealed), audited, and applied at once: only that driver
 * stops or starts, the others keep reading. Its tags follow: a replaced driver defines its tags
 * anew, a removed one's tags leave the store, its collections and so its history logging.
 * Derived-tag drivers (type `derived`) also need `DerivedTagManage` to be added, replaced or
 * removed. Relay drivers (types `sparkplug` and `mqtt`) need the data relay feature of the
 * license to be added, replaced or checked (403 `feature-unavailable` otherwise, as the
 * publisher routes); one can always be removed. `GET /api/v2/DriverConfigurations` lists every entry (disabled ones too) and
 * `POST /api/v2/DriverConfigurations/Check` validates one as a change would, saving nothing
 * (the console's CSV import previews with it).
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import {
  ConflictError,
  type FieldError,
  ForbiddenError,
  NotFoundError,
  ProfileInvalidError,
  ValidationError,
} from '../../errors.js';
import { unlicensed } from '../../license/license.js';
import { driverLicenseBlocker } from '../../license/licensed-drivers.js';
import { type DriverConfig, driverConfigSchema, type ProfileInput } from '../../profile/schema.js';
import {
  findSecrets,
  maskSecrets,
  secretMask,
  unmaskSecrets,
} from '../../profile/secret-fields.js';
import { formatPath, validateProfile } from '../../profile/validate-profile.js';
import type { ReloadSummary } from '../../reload/profile-reloader.js';
import { tagColumns, tagsToCsv } from '../../tags/tag-csv.js';
import type { ApiDeps } from '../api-deps.js';
import { configurationBodyBytes } from '../json-bodies.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { refuseStateDirFiles } from '../state-dir-guard.js';
import { driverReportSchema } from './drivers.js';
import { reloaderOf, reloadSummarySchema } from './profile.js';

const basePath = '/api/v2/Drivers';
const tag = 'Drivers';

/** A driver's profile entry, as in `drivers[]` of the profile. */
export const driverEntrySchema = driverConfigSchema.meta({
  id: 'DriverEntry',
  description: `A driver's entry exactly as in the profile's \`drivers[]\` (see config/profile.schema.json), told apart by \`type\`. Secrets (an OPC UA password) are answered as \`${secretMask}\`; sending the mask back keeps the stored one.`,
});

/** What a driver change did: the entry saved (secrets masked), the driver now, the reload. */
export const driverChangeSchema = z
  .object({
    configuration: driverEntrySchema,
    report: driverReportSchema
      .optional()
      .describe(
        'The driver as GET Drivers/{name} shows it (`Failed` when it could not start); absent when disabled.',
      ),
    reload: reloadSummarySchema,
  })
  .meta({ id: 'DriverChange' });

const nameParams = z.object({
  name: z.string().min(1).max(256).describe('Driver (component) name.'),
});

/** What a check found: the entry is valid as sent, and whether it replaces a stored one. */
export const driverCheckSchema = z
  .object({
    configuration: driverEntrySchema,
    replaces: z
      .boolean()
      .describe('True when the profile has a driver of that name (a PUT would replace it).'),
  })
  .meta({ id: 'DriverCheck' });

const checkQuery = z.object({
  intent: z
    .enum(['create', 'replace'])
    .optional()
    .describe(
      '`create`: also answer 409 `already-exists` when the name is in use, as POST would; `replace`: 404 when it is not, as PUT would.',
    ),
});

/** What every route that takes an entry says about the relay drivers' license. */
const relayLicenseNote =
  'A relay driver (`sparkplug`, `mqtt`) needs the data relay feature of the license (server or enterprise edition): without it the entry is refused with 403 `feature-unavailable`, and nothing is saved.';

/** Driver management (`DriverManage`). */
export function driverManagementRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'DriverManage' } as const;
  // A relay driver receives other gateways' data: licensed as the publishers are.
  const requireLicensed = (config: Pick<DriverConfig, 'type'>) => {
    const message = driverLicenseBlocker(deps.license?.() ?? unlicensed, config.type);
    if (message !== undefined) throw new ForbiddenError(message, 'feature-unavailable');
  };
  const current = () => {
    if (!deps.profile) throw new Error('The driver management routes need the profile service.');
    return deps.profile.current();
  };
  const entryOf = (name: string): DriverConfig => {
    const entry = current().drivers.find((driver) => driver.name === name);
    if (!entry) throw new NotFoundError(`No driver named '${name.slice(0, 300)}' in the profile.`);
    return entry;
  };
  const answer = (config: DriverConfig, reload: ReloadSummary) => {
    const report = deps.drivers?.get(config.name);
    return {
      configuration: maskSecrets(driverConfigSchema, config),
      ...(report ? { report } : {}),
      reload,
    };
  };
  const changed = {
    description: 'Saved and applied.',
    schema: driverChangeSchema,
  };

  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/DriverConfigurations',
      operationId: 'listDriverConfigurations',
      tag,
      summary: "Every driver's profile entry, disabled ones included, secrets masked",
      description:
        'The `drivers[]` of the profile as saved (defaults filled in), in profile order; `GET /api/v2/Drivers` lists only the enabled ones, and no configuration.',
      access,
      responses: {
        200: {
          description: 'The entries.',
          schema: z
            .object({ drivers: z.array(driverEntrySchema) })
            .meta({ id: 'DriverConfigurationList' }),
        },
      },
      problems: [],
      handle: () => ({
        drivers: current().drivers.map((config) => maskSecrets(driverConfigSchema, config)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/DriverConfigurations/Check',
      operationId: 'checkDriverConfiguration',
      tag,
      summary: 'Check a driver entry without saving it',
      description: `Validates an entry as POST and PUT \`/api/v2/Drivers\` would (the profile's schema, then the rules of the whole profile with the entry in place of the stored one of its name, or added), and saves nothing: every error is answered at its path in the body, as a 400 \`validation-failed\`. For a preview before a change (the console's CSV import). ${relayLicenseNote}`,
      access,
      query: checkQuery,
      body: driverEntrySchema,
      maxBodyBytes: configurationBodyBytes,
      responses: { 200: { description: 'The entry is valid.', schema: driverCheckSchema } },
      problems: [404, 409],
      handle: ({ query, body }) => {
        requireLicensed(body);
        const drivers = current().drivers;
        const index = drivers.findIndex((existing) => existing.name === body.name);
        const stored = drivers[index];
        if (query.intent === 'create' && stored) {
          throw new ConflictError(
            'already-exists',
            `A driver named '${body.name}' already exists.`,
          );
        }
        if (query.intent === 'replace' && !stored) throw notFound(body.name);
        if (deps.stateDirGuard) refuseStateDirFiles(body, deps.stateDirGuard);
        let config: DriverConfig = body;
        if (stored) {
          refuseSecretsToNewPeer(body, stored);
          config = unmaskSecrets(driverConfigSchema, body, stored);
        }
        rejectMasks(config);
        const draft = structuredClone(current()) as ProfileInput;
        const list = driversOf(draft);
        const at = index < 0 ? list.length : index;
        list[at] = config;
        const validation = validateProfile(draft);
        if (!validation.ok) {
          const own = `drivers[${at}]`;
          throw new ValidationError(
            'The request body is invalid.',
            validation.errors.map((found) =>
              found.path === own ||
              found.path.startsWith(`${own}.`) ||
              found.path.startsWith(`${own}[`)
                ? {
                    path: found.path.slice(own.length).replace(/^\./, '') || '(root)',
                    message: found.message,
                  }
                : found,
            ),
          );
        }
        return {
          configuration: maskSecrets(driverConfigSchema, config),
          replaces: Boolean(stored),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: 'createDriver',
      tag,
      summary: 'Add a driver',
      description: `Validates the entry with the profile's own schema (every wrong field listed with its path in the body), saves it to the profile and starts the driver at once; no other driver restarts. A name in use is 409 \`already-exists\`. A driver whose files are unusable or that fails to start is saved and listed in \`reload.failed\`. ${relayLicenseNote}`,
      access,
      body: driverEntrySchema,
      maxBodyBytes: configurationBodyBytes,
      responses: { 201: changed },
      problems: [409, 503],
      handle: async ({ context, body, principal }) => {
        requireDerivedTagManage(principal, body);
        requireLicensed(body);
        rejectMasks(body);
        if (deps.stateDirGuard) refuseStateDirFiles(body, deps.stateDirGuard);
        const reload = await saved(() =>
          reloaderOf(deps).edit(
            (draft) => {
              const drivers = driversOf(draft);
              if (drivers.some((existing) => existing.name === body.name)) {
                throw new ConflictError(
                  'already-exists',
                  `A driver named '${body.name}' already exists.`,
                );
              }
              drivers.push(body);
            },
            audited('driver-created', body, principal),
          ),
        );
        context.status = 201;
        return answer(body, reload);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}/Configuration`,
      operationId: 'getDriverConfiguration',
      tag,
      summary: "A driver's profile entry, secrets masked",
      description:
        'The entry as saved in the profile, disabled drivers included; edit it and send it back with PUT.',
      access,
      params: nameParams,
      responses: { 200: { description: 'The entry.', schema: driverEntrySchema } },
      problems: [404],
      handle: ({ params }) => maskSecrets(driverConfigSchema, entryOf(params.name)),
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}/Tags.csv`,
      operationId: 'getDriverTagsCsv',
      tag,
      summary: "A driver's tag list as CSV",
      description:
        "The tags of a Modbus, OPC UA or simulator driver's entry as `text/csv` (RFC 4180, UTF-8, CRLF): a header row of the type's tag fields, one row per tag, empty for a field not set; text a spreadsheet would run as a formula starts with an apostrophe. The console imports this format (docs/console-configuration.md lists the columns); to change the tags, PUT the entry. A CAN or derived-tag driver has no tag list here (404).",
      access,
      params: nameParams,
      responses: {
        200: {
          description: 'The tag list (`text/csv`).',
          schema: z.string().meta({ id: 'DriverTagsCsv' }),
        },
      },
      problems: [404],
      handle: ({ context, params }) => {
        const entry = entryOf(params.name) as { type: string; tags?: unknown };
        if (!tagColumns[entry.type] || !Array.isArray(entry.tags)) {
          throw new NotFoundError(
            `The ${entry.type} driver '${params.name.slice(0, 300)}' has no tag list to give as CSV.`,
          );
        }
        context.type = 'text/csv; charset=utf-8';
        context.set('Content-Disposition', `attachment; filename="${params.name}-tags.csv"`);
        return tagsToCsv(entry.type, entry.tags as Record<string, unknown>[]);
      },
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/{name}`,
      operationId: 'replaceDriver',
      tag,
      summary: 'Replace a driver',
      description: `Replaces the whole entry and restarts that driver alone with it: its tags are defined anew (Unavailable until first read; tags it no longer has leave the store). \`name\` must be the path's (a driver cannot be renamed: delete and add). A secret sent as \`${secretMask}\` keeps the stored one, unless the driver now points at another server (\`endpointUrl\`, \`host\`, an MQTT driver's \`brokerUrl\` host or port), which needs the secret again. ${relayLicenseNote}`,
      access,
      params: nameParams,
      body: driverEntrySchema,
      maxBodyBytes: configurationBodyBytes,
      responses: { 200: changed },
      problems: [404, 503],
      handle: async ({ params, body, principal }) => {
        requireDerivedTagManage(principal, body);
        const stored = current().drivers.find((driver) => driver.name === params.name);
        if (stored) requireDerivedTagManage(principal, stored);
        requireLicensed(body);
        if (deps.stateDirGuard) refuseStateDirFiles(body, deps.stateDirGuard);
        if (body.name !== params.name) {
          throw new ValidationError('The request body is invalid.', [
            {
              path: 'name',
              message: `The name cannot change: it must be '${params.name}' (the path's).`,
            },
          ]);
        }
        let config: DriverConfig = body;
        const reload = await saved(() =>
          reloaderOf(deps).edit(
            (draft) => {
              const drivers = driversOf(draft);
              const index = drivers.findIndex((existing) => existing.name === params.name);
              const stored = current().drivers[index];
              if (index < 0 || stored === undefined) throw notFound(params.name);
              refuseSecretsToNewPeer(body, stored);
              config = unmaskSecrets(driverConfigSchema, body, stored);
              rejectMasks(config);
              drivers[index] = config;
            },
            audited('driver-replaced', body, principal),
          ),
        );
        return answer(config, reload);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: 'deleteDriver',
      tag,
      summary: 'Remove a driver',
      description:
        'Stops the driver and removes it from the profile; its tags leave the store and every collection (so history stops logging them; what was logged stays). No other driver restarts.',
      access,
      params: nameParams,
      responses: { 204: { description: 'Removed.' } },
      problems: [404, 503],
      handle: async ({ context, params, principal }) => {
        const entry = entryOf(params.name);
        requireDerivedTagManage(principal, entry);
        await reloaderOf(deps).edit(
          (draft) => {
            const drivers = driversOf(draft);
            const index = drivers.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            drivers.splice(index, 1);
          },
          audited('driver-deleted', entry, principal),
        );
        context.status = 204;
      },
    }),
  ];
}

/**
 * Derived tags are changed through their driver's entry, and that takes `DerivedTagManage` on
 * top of the route's `DriverManage` (both are Administrators' today; the permission lets a role
 * be given derived tags without devices, or the reverse, without another route).
 * @throws ForbiddenError when the entry is a derived-tag driver and the caller lacks it.
 */
export function requireDerivedTagManage(
  principal: Pick<Principal, 'permissions'> | undefined,
  config: Pick<DriverConfig, 'type'>,
): void {
  if (config.type !== 'derived') return;
  if (principal?.permissions.has('DerivedTagManage')) return;
  throw new ForbiddenError('Changing derived tags needs the DerivedTagManage permission.');
}

function driversOf(draft: ProfileInput): NonNullable<ProfileInput['drivers']> {
  draft.drivers ??= [];
  return draft.drivers;
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(`No driver named '${name.slice(0, 300)}' in the profile.`);
}

// Names only: an entry may hold a password, and the audit log must never.
function audited(event: string, config: DriverConfig, principal: Principal | undefined) {
  return { event, driver: config.name, type: config.type, username: principal?.user.username };
}

/**
 * Runs a profile edit; errors the whole-profile validation finds in the edited entry
 * (`drivers[3].tags[1].name`: a duplicate tag, a full path too long) are answered with paths
 * in the request body (`tags[1].name`), as a 400 `validation-failed` like the body's own.
 */
async function saved(run: () => Promise<ReloadSummary>): Promise<ReloadSummary> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ProfileInvalidError)) throw error;
    const errors: FieldError[] = error.errors.map((found) => ({
      path: found.path.replace(/^drivers\[\d+\]\.?/, '') || '(root)',
      message: found.message,
    }));
    throw new ValidationError('The request body is invalid.', errors);
  }
}

// The mask stands for a stored secret; where nothing is stored it must not be saved as a value.
function rejectMasks(config: DriverConfig): void {
  const masked = findSecrets(driverConfigSchema, config).filter(
    (found) => found.value === secretMask,
  );
  if (masked.length === 0) return;
  throw new ValidationError(
    'The request body is invalid.',
    masked.map((found) => ({
      path: formatPath(found.path),
      message: `'${secretMask}' keeps a stored secret, and none is stored here: send the value.`,
    })),
  );
}

/**
 * A kept secret (sent back as the mask) may only go to the server it went to before: whoever can
 * edit a driver must not be able to send its stored password to a host of their choosing.
 * @throws ValidationError naming each masked secret.
 */
function refuseSecretsToNewPeer(incoming: DriverConfig, stored: DriverConfig): void {
  const storedBroker = (stored as unknown as Record<string, unknown>).brokerUrl;
  const peer = (config: DriverConfig) => {
    const record = config as unknown as Record<string, unknown>;
    // An MQTT broker URL is itself a secret: the mask stands for the stored one.
    const broker = record.brokerUrl === secretMask ? storedBroker : record.brokerUrl;
    return JSON.stringify([
      record.type,
      record.endpointUrl,
      record.transport,
      record.host,
      brokerOrigin(broker),
    ]);
  };
  if (peer(incoming) === peer(stored)) return;
  const masked = findSecrets(driverConfigSchema, incoming).filter(
    (found) => found.value === secretMask,
  );
  if (masked.length === 0) return;
  throw new ValidationError(
    'The driver now points at another server: enter its secrets again.',
    masked.map((found) => ({
      path: formatPath(found.path),
      message: 'Enter this secret again: the driver now connects elsewhere.',
    })),
  );
}

/** Scheme, host and port of a broker URL (its credentials left out), or the value itself. */
function brokerOrigin(url: unknown): unknown {
  if (typeof url !== 'string') return url;
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return url;
  }
}
