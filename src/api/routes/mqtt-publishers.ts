/**
 * Management of MQTT publishers under `/api/v2/Publishers/Mqtt`: list, read, create, replace,
 * delete, start and stop, with the webhook routes' permissions (PublisherView /
 * PublisherManage), license gating (data relay), audit, sealing and masking: the routes of
 * every publisher kind (`publisher-management.ts`). Configuration changes are saved to the
 * profile atomically before the running publishers follow them. This module holds what is the
 * MQTT publishers' own: their schemas and texts, and where a kept credential may go.
 */
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { ProfileInput } from '../../profile/schema.js';
import { findSecrets, secretMask } from '../../profile/secret-fields.js';
import { formatPath } from '../../profile/validate-profile.js';
import type { MqttPublisherState } from '../../publishers/mqtt/mqtt-publisher.js';
import {
  type MqttConfig,
  mqttConfigFields,
  mqttConfigSchema,
} from '../../publishers/mqtt/schema.js';
import type { ApiDeps } from '../api-deps.js';
import type { RouteDefinition } from '../route.js';
import { type PublisherKind, publisherManagementRoutes } from './publisher-management.js';
import { acceptingMask, publisherStateSchema } from './publishers.js';

/** What an MQTT publisher is doing: the publisher state plus its connection and queue. */
export const mqttPublisherStateSchema = publisherStateSchema
  .extend({
    reason: z
      .string()
      .optional()
      .describe(
        'Why the publisher is Off (stopped, not licensed, a missing collection…) or in Error (the broker unreachable or refusing, never with a credential; or, not running, a file it names could not be used).',
      ),
    connected: z.boolean().describe('True while connected to the broker.'),
    messages: z.int().min(0).describe('Messages delivered (acknowledged at QoS 1).'),
    queueDepth: z.int().min(0).describe('Messages waiting for the broker.'),
    oldestQueuedAgeSeconds: z
      .int()
      .min(0)
      .describe('Age of the oldest message waiting for the broker, seconds; 0 when none waits.'),
    sparkplug: z
      .object({
        commandsWritten: z
          .int()
          .min(0)
          .describe('DCMD metrics written through the tag writer since the publisher started.'),
        commandsRefused: z
          .int()
          .min(0)
          .describe('Write command metrics refused since the publisher started.'),
        primaryHostOnline: z
          .boolean()
          .optional()
          .describe("With a primaryHostId: the primary host's latest STATE said online."),
        primaryHostSince: z
          .string()
          .optional()
          .describe(
            "With a primaryHostId: since when (ISO 8601) the primary host is online or offline as far as this publisher knows: the STATE that changed it, or the publisher's start (no STATE yet counts as offline).",
          ),
        storedSamples: z
          .int()
          .min(0)
          .optional()
          .describe('With a primaryHostId: samples stored in the outbox, waiting to be forwarded.'),
        droppedSamples: z
          .int()
          .min(0)
          .optional()
          .describe(
            'With a primaryHostId: stored samples dropped (the oldest first) from a full outbox since the publisher started.',
          ),
        forwardedSamples: z
          .int()
          .min(0)
          .optional()
          .describe('With a primaryHostId: stored samples forwarded as historical data.'),
        catchingUp: z
          .boolean()
          .optional()
          .describe('With a primaryHostId: true while stored samples are being forwarded.'),
      })
      .optional()
      .describe('sparkplugB, while running: write commands and store-and-forward.'),
  })
  .meta({ id: 'MqttPublisherState' });

/** An MQTT publisher as the API shows it: its configuration, every secret masked, and its state. */
export const mqttPublisherSchema = z
  .object({ ...mqttConfigSchema.shape, state: mqttPublisherStateSchema })
  .meta({
    id: 'MqttPublisher',
    description: `The configuration with the broker URL and every credential shown as \`${secretMask}\`, and the state.`,
  });

/**
 * Body of PUT: a configuration in which any secret may be {@link secretMask} to keep the stored
 * value, and `name` may be left out (it is the path's).
 */
export const mqttReplacementSchema = (acceptingMask(mqttConfigFields) as typeof mqttConfigFields)
  // The rules that span fields (Sparkplug ids) are checked on the merged configuration.
  .extend({ name: mqttConfigFields.shape.name.optional() })
  .meta({
    id: 'MqttPublisherReplacement',
    description: `A whole MQTT publisher configuration. A secret field holding \`${secretMask}\` keeps the stored secret; \`name\` may be left out and otherwise must be the path's.`,
  });

/** The MQTT publishers, for the management routes they share with the webhook publishers. */
const mqttKind: PublisherKind<MqttConfig, MqttPublisherState> = {
  basePath: '/api/v2/Publishers/Mqtt',
  noun: 'MQTT publisher',
  article: 'an',
  operationName: 'Mqtt',
  eventName: 'mqtt',
  descriptions: {
    list: 'Every MQTT publisher in profile order, secrets masked, with its state.',
    create:
      'Validates the configuration (every wrong field listed with its message), saves it to the profile and starts the publisher when Auto Connect is on and every collection exists; otherwise it stays Off and `state.reason` says why. A name in use (by an MQTT or a webhook publisher: they share the health tags) is 409 `already-exists`. The files the configuration names (its `caFile` and the client certificate and key (parsed, the key decrypted with `keyPassphrase` and matched to the certificate)) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.',
    read: 'The configuration (secrets masked) and the state: status, reason, connection, queue, the last delivery and the counters.',
    replace: `Replaces the whole configuration. A secret sent as \`${secretMask}\` keeps the stored one, so what GET returned can be edited and sent back; a broker URL pointing to another host needs the credentials entered again. \`name\` may be left out; a different name is refused (400). A running publisher restarts with the new configuration. The files the configuration names (its \`caFile\` and the client certificate and key (parsed, the key decrypted with \`keyPassphrase\` and matched to the certificate)) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.`,
    start:
      'Starts the publisher. When it cannot run — no collection selected, or a selected collection does not exist — it stays Off: the answer is still 200, with `status` Off and `reason` naming what is missing. When a file it names cannot be used, or its start fails, it is `Error` with a `reason` and does not run. The profile is not changed.',
    test: "json and json-per-tag: connects to the broker with the publisher's settings (client id `<clientId>-test`, so the running session is not taken over), publishes one batch (a JSON array of entries, numeric tags only) at QoS 1 to `<topicPrefix>/test`, and answers the PUBACK and the time it took. sparkplugB has no test message (its messages belong to the session): the answer is `ok` false saying so.",
    stop: 'Stops the publisher (Sparkplug: DDEATH and NDEATH first) and disconnects: status Off, reason `stopped`. The profile is not changed.',
  },
  configSchema: mqttConfigSchema,
  replacementSchema: mqttReplacementSchema,
  viewSchema: mqttPublisherSchema,
  stateSchema: mqttPublisherStateSchema,
  manager: (deps) => deps.mqttPublishers,
  configs: (profile) => profile.publishers.mqtt,
  entries: mqttOf,
  // A webhook's name is taken too: the two kinds share the health tags Publishers/<name>/….
  nameInUse: (draft, name) =>
    mqttOf(draft).some((existing) => existing.name === name) ||
    (draft.publishers?.webhooks ?? []).some((existing) => existing.name === name)
      ? `A publisher named '${name}' already exists.`
      : undefined,
  offState,
  refuseCredentialsToNewDestination: refuseCredentialsToNewBroker,
};

/** MQTT publisher management; every route needs the data relay feature (403 otherwise). */
export function mqttPublisherRoutes(deps: ApiDeps): RouteDefinition[] {
  return publisherManagementRoutes(deps, mqttKind);
}

function offState(name: string): MqttPublisherState {
  return {
    name,
    status: 'Off',
    reason: 'not loaded',
    counters: { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 },
    connected: false,
    messages: 0,
    queueDepth: 0,
    oldestQueuedAgeSeconds: 0,
  };
}

function mqttOf(draft: ProfileInput): z.input<typeof mqttConfigSchema>[] {
  draft.publishers ??= {};
  draft.publishers.mqtt ??= [];
  return draft.publishers.mqtt;
}

/**
 * A kept credential (sent back as the mask) may only go to the broker it went to before:
 * whoever can edit a publisher must not redirect its stored password to a host of their
 * choosing. A new broker host or port requires entering the credentials again.
 * @throws ValidationError naming each masked credential.
 */
function refuseCredentialsToNewBroker(incoming: unknown, stored: unknown): void {
  const url = (value: unknown) => (value as { brokerUrl?: unknown } | undefined)?.brokerUrl;
  const next = url(incoming);
  if (typeof next !== 'string' || next === secretMask) return;
  const origin = (text: unknown) => {
    try {
      const parsed = new URL(String(text));
      return `${parsed.protocol}//${parsed.host}`;
    } catch {
      return undefined;
    }
  };
  if (origin(next) === origin(url(stored))) return;
  const masked = findSecrets(mqttConfigSchema, incoming).filter(
    (found) => found.value === secretMask && found.path.join('.') !== 'brokerUrl',
  );
  if (masked.length === 0) return;
  throw new ValidationError(
    'The broker changed: enter its credentials again.',
    masked.map((found) => ({
      path: formatPath(found.path),
      message: 'Enter this credential again: the broker URL now points elsewhere.',
    })),
  );
}
