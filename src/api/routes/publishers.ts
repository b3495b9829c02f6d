/**
 * Management of webhook publishers (spec §2.4, §3.1): list, read, create, replace, delete, start and stop under
 * `/api/v2/Publishers/Webhooks`. Configuration changes are saved to the profile atomically
 * (ProfileService) before the running publishers follow them; secrets leave only masked. The
 * routes are those of every publisher kind (`publisher-management.ts`); this module holds what
 * is the webhooks' own: their schemas and texts, and where a kept credential may go.
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { ProfileInput } from '../../profile/schema.js';
import { findSecrets, secretMask } from '../../profile/secret-fields.js';
import { formatPath } from '../../profile/validate-profile.js';
import type { PublisherState } from '../../publishers/publisher.js';
import { type WebhookConfig, webhookConfigSchema } from '../../publishers/webhook/schema.js';
import type { ApiDeps } from '../api-deps.js';
import type { RouteDefinition } from '../route.js';
import { type PublisherKind, publisherManagementRoutes } from './publisher-management.js';

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
      .describe(
        'On: running. Off: stopped. Error: the last delivery failed all 3 attempts, or the publisher could not start (not running; `reason` says why).',
      ),
    reason: z
      .string()
      .optional()
      .describe(
        'Why an Off publisher is off (stopped, not licensed, a missing collection…), or why one in Error could not start (a file it names could not be used).',
      ),
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

/** The webhook publishers, for the management routes they share with the MQTT publishers. */
const webhookKind: PublisherKind<WebhookConfig, PublisherState> = {
  basePath: '/api/v2/Publishers/Webhooks',
  noun: 'webhook publisher',
  article: 'a',
  operationName: 'Webhook',
  eventName: 'webhook',
  descriptions: {
    list: 'Every publisher in profile order, secrets masked, with its state.',
    create:
      'Validates the configuration (every wrong field listed with its message), saves it to the profile and starts the publisher when Auto Connect is on and every collection exists; otherwise it stays Off and `state.reason` says why. A name in use (by a webhook or an MQTT publisher: they share the health tags) is 409 `already-exists`. The files the configuration names (its `caFile`) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.',
    read: 'The configuration (secrets masked) and the state: status, reason (when Off, or Error after a failed start), the last delivery (time, HTTP status, attempts, duration) and the counters.',
    replace: `Replaces the whole configuration. A secret sent as \`${secretMask}\` keeps the stored one, so what GET returned can be edited and sent back. \`name\` may be left out; a different name is refused (400). A running publisher keeps running with the new configuration. The files the configuration names (its \`caFile\`) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.`,
    start:
      'Starts the publisher (spec §3.1). When it cannot run — no collection selected, or a selected collection does not exist — it stays Off: the answer is still 200, with `status` Off and `reason` naming what is missing. When a file it names cannot be used, or its start fails, it is `Error` with a `reason` and does not run. Starting a running publisher changes nothing. The profile is not changed (Auto Connect stays as configured).',
    stop: 'Stops the publisher: status Off, reason `stopped`. The profile is not changed.',
    test: "Sends one batch now (the JSON array the publisher sends: numeric tags only) to the destination with the publisher's credentials, signing, gzip and caFile, in one attempt (no retries: the first answer is the one shown), and answers the receiver's HTTP status and the time it took.",
  },
  configSchema: webhookConfigSchema,
  replacementSchema: webhookReplacementSchema,
  viewSchema: webhookPublisherSchema,
  stateSchema: publisherStateSchema,
  manager: (deps) => deps.publishers,
  configs: (profile) => profile.publishers.webhooks,
  entries: webhooksOf,
  // An MQTT publisher's name is taken too: the two kinds share the health tags Publishers/<name>/….
  nameInUse: (draft, name) =>
    webhooksOf(draft).some((existing) => existing.name === name) ||
    (draft.publishers?.mqtt ?? []).some((existing) => existing.name === name)
      ? `A publisher named '${name}' already exists.`
      : undefined,
  offState,
  refuseCredentialsToNewDestination: refuseCredentialsToNewOrigin,
};

/** Webhook publisher management; every route needs the data relay feature (403 otherwise). */
export function publisherRoutes(deps: ApiDeps): RouteDefinition[] {
  return publisherManagementRoutes(deps, webhookKind);
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

function webhooksOf(draft: ProfileInput): z.input<typeof webhookConfigSchema>[] {
  draft.publishers ??= {};
  draft.publishers.webhooks ??= [];
  return draft.publishers.webhooks;
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
