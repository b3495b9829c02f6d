/**
 * Management of webhook publishers (spec §2.4, §3.1): list, read, create, replace, delete, start and stop under
 * `/api/v2/Publishers/Webhooks`. Configuration changes are saved to the profile atomically
 * (ProfileService) before the running publishers follow them; secrets leave only masked.
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import { editionsWith, type LicenseState, unlicensed } from '../../license/license.js';
import type { ProfileService } from '../../profile/profile-service.js';
import type { ProfileInput } from '../../profile/schema.js';
import {
  findSecrets,
  maskSecrets,
  secretMask,
  unmaskSecrets,
} from '../../profile/secret-fields.js';
import { formatPath, toFieldErrors } from '../../profile/validate-profile.js';
import type { PublisherManager, PublisherState } from '../../publishers/publisher.js';
import { type WebhookConfig, webhookConfigSchema } from '../../publishers/webhook/schema.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const basePath = '/api/v2/Publishers/Webhooks';
const tag = 'Publishers';

/** The outcome of a publisher's last delivery (all its attempts). */
export const deliveryRecordSchema = z
  .object({
    at: z.string().describe('When the delivery ended, ISO 8601 UTC.'),
    ok: z.boolean().describe('Whether one of the attempts was answered with a 2xx status.'),
    httpStatus: z
      .int()
      .optional()
      .describe('HTTP status of the last attempt; absent when no answer came.'),
    attempts: z.int().min(1).max(3).describe('Attempts made, 1 to 3.'),
    durationMs: z.number().min(0).describe('From the first attempt to the end, milliseconds.'),
    samples: z.int().min(0).describe('Samples in the batch.'),
    error: z
      .string()
      .optional()
      .describe('Why the last attempt failed (status or network error); never a secret.'),
  })
  .meta({ id: 'PublisherDelivery' });

/** Running totals of a publisher. */
export const publisherCountersSchema = z
  .object({
    batches: z.int().min(0).describe('Batches delivered.'),
    samples: z.int().min(0).describe('Samples in the delivered batches.'),
    failures: z.int().min(0).describe('Batches dropped after their third failed attempt.'),
    skippedTicks: z
      .int()
      .min(0)
      .describe('Snapshot ticks skipped because a delivery was still in flight.'),
    droppedSamples: z
      .int()
      .min(0)
      .describe('Everything-mode updates dropped because the buffer was full.'),
  })
  .meta({ id: 'PublisherCounters' });

/** What a publisher is doing (spec §3.1). */
export const publisherStateSchema = z
  .object({
    name: z.string(),
    status: z
      .enum(['On', 'Off', 'Error'])
      .describe('On: running. Off: stopped. Error: the last delivery failed all 3 attempts.'),
    reason: z
      .string()
      .optional()
      .describe('Why an Off publisher is off (stopped, not licensed, a missing collection…).'),
    lastDelivery: deliveryRecordSchema.optional(),
    counters: publisherCountersSchema,
  })
  .meta({ id: 'PublisherState' });

/** A publisher as the API shows it: its configuration, every secret masked, and its state. */
export const webhookPublisherSchema = z
  .object({
    ...webhookConfigSchema.shape,
    state: publisherStateSchema,
  })
  .meta({
    id: 'WebhookPublisher',
    description: `The configuration with the destination URL and every credential shown as \`${secretMask}\`, and the state.`,
  });

/** A publisher as answered: configuration (secrets masked) and state. */
export type WebhookPublisherView = WebhookConfig & { state: PublisherState };

/**
 * Body of PUT: a publisher configuration in which any secret may be {@link secretMask} to keep
 * the stored value, and `name` may be left out (it is the path's).
 */
export const webhookReplacementSchema = (
  acceptingMask(webhookConfigSchema) as typeof webhookConfigSchema
)
  .extend({ name: webhookConfigSchema.shape.name.optional() })
  .meta({
    id: 'WebhookPublisherReplacement',
    description: `A whole publisher configuration. A secret field holding \`${secretMask}\` keeps the stored secret; \`name\` may be left out and otherwise must be the path's.`,
  });

const nameParams = z.object({
  name: z.string().min(1).max(128).describe('The publisher name.'),
});

/** Webhook publisher management; every route needs the data relay feature (403 otherwise). */
export function publisherRoutes(deps: ApiDeps): RouteDefinition[] {
  const license = deps.license ?? (() => unlicensed);
  // Resolved per request: the route list is also built without these services (OpenAPI).
  const services = () => {
    requireDataRelay(license());
    if (!deps.profile || !deps.publishers) {
      throw new Error('The publisher routes need the profile and publishers services.');
    }
    return { profile: deps.profile, publishers: deps.publishers };
  };
  const licenseNote = `Needs the data relay feature (${editionPhrase()}); without it every publisher route answers 403 \`feature-unavailable\`.`;
  const describe = (text: string) => `${text}\n\n${licenseNote}`;
  const found = { 200: { description: 'The publisher.', schema: webhookPublisherSchema } };

  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listWebhookPublishers',
      tag,
      summary: 'List webhook publishers',
      description: describe('Every publisher in profile order, secrets masked, with its state.'),
      access: { kind: 'permission', permission: 'PublisherView' },
      responses: {
        200: { description: 'The publishers.', schema: z.array(webhookPublisherSchema) },
      },
      problems: [],
      handle: () => {
        const { profile, publishers } = services();
        return profile.current().publishers.webhooks.map((config) => view(config, publishers));
      },
    }),
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: 'createWebhookPublisher',
      tag,
      summary: 'Create a webhook publisher',
      description: describe(
        'Validates the configuration (every wrong field listed with its message), saves it to the profile and starts the publisher when Auto Connect is on and every collection exists; otherwise it stays Off and `state.reason` says why. A name in use is 409 `already-exists`. The files the configuration names (its `caFile`) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      body: webhookConfigSchema,
      responses: { 201: { description: 'Created.', schema: webhookPublisherSchema } },
      problems: [409],
      handle: async ({ body, principal }) => {
        const { profile, publishers } = services();
        rejectMasks(body);
        await refuseUnusableFiles(publishers, body);
        await profile.update(
          (draft) => {
            const webhooks = webhooksOf(draft);
            if (webhooks.some((existing) => existing.name === body.name)) {
              throw new ConflictError(
                'already-exists',
                `A webhook publisher named '${body.name}' already exists.`,
              );
            }
            webhooks.push(body);
          },
          audited('webhook-publisher-created', body.name, principal),
        );
        await publishers.put(body);
        return view(body, publishers);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}`,
      operationId: 'getWebhookPublisher',
      tag,
      summary: 'Read a webhook publisher',
      description: describe(
        'The configuration (secrets masked) and the state: status, reason when Off, the last delivery (time, HTTP status, attempts, duration) and the counters.',
      ),
      access: { kind: 'permission', permission: 'PublisherView' },
      params: nameParams,
      responses: found,
      problems: [404],
      handle: ({ params }) => {
        const { profile, publishers } = services();
        return view(configOf(profile, params.name), publishers);
      },
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/{name}`,
      operationId: 'replaceWebhookPublisher',
      tag,
      summary: 'Replace a webhook publisher',
      description: describe(
        `Replaces the whole configuration. A secret sent as \`${secretMask}\` keeps the stored one, so what GET returned can be edited and sent back. \`name\` may be left out; a different name is refused (400). A running publisher keeps running with the new configuration. The files the configuration names (its \`caFile\`) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.`,
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      body: webhookReplacementSchema,
      responses: found,
      problems: [404],
      handle: async ({ params, body, principal }) => {
        const { profile, publishers } = services();
        if (body.name !== undefined && body.name !== params.name) {
          throw new ValidationError('The request body is invalid.', [
            {
              path: 'name',
              message: `The name cannot change: it must be '${params.name}' (the path's) or left out.`,
            },
          ]);
        }
        const incoming = { ...body, name: params.name };
        const stored = configOf(profile, params.name);
        refuseCredentialsToNewOrigin(incoming, stored);
        await refuseUnusableFiles(
          publishers,
          validated(unmaskSecrets(webhookConfigSchema, incoming, stored)),
        );
        let replaced: WebhookConfig | undefined;
        await profile.update(
          (draft) => {
            const webhooks = webhooksOf(draft);
            const index = webhooks.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            refuseCredentialsToNewOrigin(incoming, webhooks[index]);
            const config = validated(unmaskSecrets(webhookConfigSchema, incoming, webhooks[index]));
            webhooks[index] = config;
            replaced = config;
          },
          audited('webhook-publisher-replaced', params.name, principal),
        );
        const config = replaced as WebhookConfig;
        await publishers.put(config);
        return view(config, publishers);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: 'deleteWebhookPublisher',
      tag,
      summary: 'Delete a webhook publisher',
      description: describe('Stops the publisher and removes it from the profile.'),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        const { profile, publishers } = services();
        await profile.update(
          (draft) => {
            const webhooks = webhooksOf(draft);
            const index = webhooks.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            webhooks.splice(index, 1);
          },
          audited('webhook-publisher-deleted', params.name, principal),
        );
        await publishers.remove(params.name);
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Start`,
      operationId: 'startWebhookPublisher',
      tag,
      summary: 'Start a webhook publisher',
      description: describe(
        'Starts the publisher (spec §3.1). When it cannot run — no collection selected, or a selected collection does not exist — it stays Off: the answer is still 200, with `status` Off and `reason` naming what is missing. Starting a running publisher changes nothing. The profile is not changed (Auto Connect stays as configured).',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the start.', schema: publisherStateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.start(params.name);
        deps.audit.info(
          {
            event: 'webhook-publisher-started',
            publisher: params.name,
            username: principal?.user.username,
            status: state.status,
            ...(state.reason !== undefined ? { reason: state.reason } : {}),
          },
          state.status === 'Off' ? 'publisher start refused' : 'publisher started',
        );
        return state;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Stop`,
      operationId: 'stopWebhookPublisher',
      tag,
      summary: 'Stop a webhook publisher',
      description: describe(
        'Stops the publisher: status Off, reason `stopped`. The profile is not changed.',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the stop.', schema: publisherStateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.stop(params.name);
        deps.audit.info(
          {
            event: 'webhook-publisher-stopped',
            publisher: params.name,
            username: principal?.user.username,
          },
          'publisher stopped',
        );
        return state;
      },
    }),
  ];
}

/**
 * Refuses a configuration whose files (caFile, a client certificate and key) its start could not
 * use, naming each field at fault: a publisher is never saved to fail later (shared with the MQTT
 * publisher routes). The files are read as the publisher will read them.
 * @throws ValidationError listing every problem.
 */
export async function refuseUnusableFiles<Config>(
  publishers: PublisherManager<Config, PublisherState>,
  config: Config,
): Promise<void> {
  const problems = await publishers.checkFiles(config);
  if (problems.length > 0) {
    throw new ValidationError('A file the configuration names cannot be used.', problems);
  }
}

/**
 * Refuses when the data relay feature is not licensed.
 * @param what the publisher kind the message names. Default: "The webhook publisher".
 * @throws ForbiddenError `feature-unavailable`, naming the editions that include it.
 */
export function requireDataRelay(license: LicenseState, what = 'The webhook publisher'): void {
  if (license.features.has('dataRelay')) return;
  const current =
    license.edition === 'unlicensed'
      ? 'this installation is not licensed'
      : `this installation is licensed for the ${license.edition} edition`;
  throw new ForbiddenError(
    `${what} needs the data relay feature of the ${editionPhrase()}; ${current}.`,
    'feature-unavailable',
  );
}

/** "server or enterprise edition": the editions with the data relay feature. */
export function editionPhrase(): string {
  const names = editionsWith('dataRelay');
  const last = names.pop();
  return `${names.length > 0 ? `${names.join(', ')} or ` : ''}${last} edition`;
}

function view(
  config: WebhookConfig,
  publishers: PublisherManager<WebhookConfig>,
): WebhookPublisherView {
  return {
    ...maskSecrets(webhookConfigSchema, config),
    state: publishers.get(config.name) ?? offState(config.name),
  };
}

// A publisher the profile has but the manager does not (yet) know is, by definition, not running.
function offState(name: string): PublisherState {
  return {
    name,
    status: 'Off',
    reason: 'not loaded',
    counters: { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 },
  };
}

function configOf(profile: ProfileService, name: string): WebhookConfig {
  const config = profile.current().publishers.webhooks.find((webhook) => webhook.name === name);
  if (config === undefined) throw notFound(name);
  return config;
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(`Webhook publisher '${name}' does not exist.`);
}

function webhooksOf(draft: ProfileInput): z.input<typeof webhookConfigSchema>[] {
  draft.publishers ??= {};
  draft.publishers.webhooks ??= [];
  return draft.publishers.webhooks;
}

function audited(event: string, publisher: string, principal: Principal | undefined) {
  // Names only: a configuration holds secrets, and the audit log must never.
  return { event, publisher, username: principal?.user.username };
}

// Validates a whole configuration after its masks were filled from the stored one.
function validated(candidate: unknown): WebhookConfig {
  const result = webhookConfigSchema.safeParse(candidate);
  if (!result.success) {
    throw new ValidationError(
      'The request body is invalid.',
      result.error.issues.flatMap(toFieldErrors),
    );
  }
  rejectMasks(result.data);
  return result.data;
}

// The mask stands for a stored secret; where nothing is stored it must not be saved as a value.
function rejectMasks(config: WebhookConfig): void {
  const masked = findSecrets(webhookConfigSchema, config).filter(
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
 * A copy of a schema whose secret fields also accept {@link secretMask} (shared with the MQTT
 * publisher routes). A field's own
 * messages are kept (the union reports the field's first issue), so a PUT is validated with
 * the same words as a POST; only the mask itself gets through, to be filled from the stored
 * configuration by the handler.
 */
export function acceptingMask(schema: z.ZodType): z.ZodType {
  const def = schema.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'optional':
      return acceptingMask(def.innerType as z.ZodType).optional();
    case 'default':
      return acceptingMask(def.innerType as z.ZodType).default(def.defaultValue as never);
    case 'object': {
      const shape = def.shape as Record<string, z.ZodType>;
      const mapped = Object.fromEntries(
        Object.entries(shape).map(([key, field]) => [key, acceptingMask(field)]),
      );
      return schema.clone({ ...schema.def, shape: mapped } as typeof schema.def);
    }
    case 'union': {
      const options = (def.options as z.ZodType[]).map(acceptingMask);
      return schema.clone({ ...schema.def, options } as typeof schema.def);
    }
    default:
      // A leaf is a secret when the walker that seals secrets finds one in it.
      if (findSecrets(schema, 'probe').length === 0) return schema;
      return z.union([z.literal(secretMask), schema], {
        error: (issue) =>
          issue.code === 'invalid_union' ? issue.errors.at(-1)?.[0]?.message : undefined,
      });
  }
}

/**
 * A kept credential (sent back as the mask) may only go where it went before: whoever can edit a
 * publisher must not be able to redirect its stored token to a host of their choosing without
 * knowing the token. Changing the destination's origin requires entering the credentials again.
 * @throws ValidationError naming each masked credential.
 */
function refuseCredentialsToNewOrigin(incoming: unknown, stored: unknown): void {
  const url = (value: unknown) =>
    (value as { destinationUrl?: unknown } | undefined)?.destinationUrl;
  const next = url(incoming);
  if (typeof next !== 'string' || next === secretMask) return;
  const origin = (text: unknown) => {
    try {
      return new URL(String(text)).origin;
    } catch {
      return undefined;
    }
  };
  if (origin(next) === origin(url(stored))) return;
  const masked = findSecrets(webhookConfigSchema, incoming).filter(
    (found) => found.value === secretMask && found.path.join('.') !== 'destinationUrl',
  );
  if (masked.length === 0) return;
  throw new ValidationError(
    'The destination changed: enter its credentials again.',
    masked.map((found) => ({
      path: formatPath(found.path),
      message: 'Enter this credential again: the destination URL now points elsewhere.',
    })),
  );
}
