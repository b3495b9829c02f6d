/**
 * Management of MQTT publishers under `/api/v2/Publishers/Mqtt`: list, read, create, replace,
 * delete, start and stop, with the webhook routes' permissions (PublisherView /
 * PublisherManage), license gating (data relay), audit, sealing and masking. Configuration
 * changes are saved to the profile atomically before the running publishers follow them.
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { unlicensed } from '../../license/license.js';
import type { ProfileService } from '../../profile/profile-service.js';
import type { ProfileInput } from '../../profile/schema.js';
import {
  findSecrets,
  maskSecrets,
  secretMask,
  unmaskSecrets,
} from '../../profile/secret-fields.js';
import { formatPath, toFieldErrors } from '../../profile/validate-profile.js';
import type { MqttPublisherState } from '../../publishers/mqtt/mqtt-publisher.js';
import {
  type MqttConfig,
  mqttConfigFields,
  mqttConfigSchema,
} from '../../publishers/mqtt/schema.js';
import type { PublisherManager } from '../../publishers/publisher.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import {
  acceptingMask,
  editionPhrase,
  publisherStateSchema,
  refuseUnusableFiles,
  requireDataRelay,
} from './publishers.js';

const basePath = '/api/v2/Publishers/Mqtt';
const tag = 'Publishers';
const kind = 'The MQTT publisher';

/** What an MQTT publisher is doing: the publisher state plus its connection and queue. */
export const mqttPublisherStateSchema = publisherStateSchema
  .extend({
    reason: z
      .string()
      .optional()
      .describe(
        'Why the publisher is Off (stopped, not licensed, a missing collection…) or in Error (the broker unreachable or refusing, never with a credential).',
      ),
    connected: z.boolean().describe('True while connected to the broker.'),
    messages: z.int().min(0).describe('Messages delivered (acknowledged at QoS 1).'),
    queueDepth: z.int().min(0).describe('Messages waiting for the broker.'),
    oldestQueuedAgeSeconds: z
      .int()
      .min(0)
      .describe('Age of the oldest message waiting for the broker, seconds; 0 when none waits.'),
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

const nameParams = z.object({
  name: z.string().min(1).max(128).describe('The publisher name.'),
});

/** The publisher as answered: configuration (secrets masked) and state. */
type MqttPublisherView = MqttConfig & { state: MqttPublisherState };

/** MQTT publisher management; every route needs the data relay feature (403 otherwise). */
export function mqttPublisherRoutes(deps: ApiDeps): RouteDefinition[] {
  const license = deps.license ?? (() => unlicensed);
  const services = () => {
    requireDataRelay(license(), kind);
    if (!deps.profile || !deps.mqttPublishers) {
      throw new Error('The MQTT publisher routes need the profile and MQTT publishers services.');
    }
    return { profile: deps.profile, publishers: deps.mqttPublishers };
  };
  const licenseNote = `Needs the data relay feature (${editionPhrase()}); without it every publisher route answers 403 \`feature-unavailable\`.`;
  const describe = (text: string) => `${text}\n\n${licenseNote}`;
  const found = { 200: { description: 'The publisher.', schema: mqttPublisherSchema } };

  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listMqttPublishers',
      tag,
      summary: 'List MQTT publishers',
      description: describe(
        'Every MQTT publisher in profile order, secrets masked, with its state.',
      ),
      access: { kind: 'permission', permission: 'PublisherView' },
      responses: { 200: { description: 'The publishers.', schema: z.array(mqttPublisherSchema) } },
      problems: [],
      handle: () => {
        const { profile, publishers } = services();
        return profile.current().publishers.mqtt.map((config) => view(config, publishers));
      },
    }),
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: 'createMqttPublisher',
      tag,
      summary: 'Create an MQTT publisher',
      description: describe(
        'Validates the configuration (every wrong field listed with its message), saves it to the profile and starts the publisher when Auto Connect is on and every collection exists; otherwise it stays Off and `state.reason` says why. A name in use (by an MQTT or a webhook publisher: they share the health tags) is 409 `already-exists`. The files the configuration names (its `caFile` and the client certificate and key (parsed, the key decrypted with `keyPassphrase` and matched to the certificate)) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      body: mqttConfigSchema,
      responses: { 201: { description: 'Created.', schema: mqttPublisherSchema } },
      problems: [409],
      handle: async ({ body, principal }) => {
        const { profile, publishers } = services();
        rejectMasks(body);
        await refuseUnusableFiles(publishers, body);
        await profile.update(
          (draft) => {
            const list = mqttOf(draft);
            const webhooks = draft.publishers?.webhooks ?? [];
            if (
              list.some((existing) => existing.name === body.name) ||
              webhooks.some((existing) => existing.name === body.name)
            ) {
              throw new ConflictError(
                'already-exists',
                `A publisher named '${body.name}' already exists.`,
              );
            }
            list.push(body);
          },
          audited('mqtt-publisher-created', body.name, principal),
        );
        await publishers.put(body);
        return view(body, publishers);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}`,
      operationId: 'getMqttPublisher',
      tag,
      summary: 'Read an MQTT publisher',
      description: describe(
        'The configuration (secrets masked) and the state: status, reason, connection, queue, the last delivery and the counters.',
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
      operationId: 'replaceMqttPublisher',
      tag,
      summary: 'Replace an MQTT publisher',
      description: describe(
        `Replaces the whole configuration. A secret sent as \`${secretMask}\` keeps the stored one, so what GET returned can be edited and sent back; a broker URL pointing to another host needs the credentials entered again. \`name\` may be left out; a different name is refused (400). A running publisher restarts with the new configuration. The files the configuration names (its \`caFile\` and the client certificate and key (parsed, the key decrypted with \`keyPassphrase\` and matched to the certificate)) are read as the publisher will read them: one it could not use is a 400 naming the field, and nothing is saved.`,
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      body: mqttReplacementSchema,
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
        refuseCredentialsToNewBroker(incoming, stored);
        await refuseUnusableFiles(
          publishers,
          validated(unmaskSecrets(mqttConfigSchema, incoming, stored)),
        );
        let replaced: MqttConfig | undefined;
        await profile.update(
          (draft) => {
            const list = mqttOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            refuseCredentialsToNewBroker(incoming, list[index]);
            const config = validated(unmaskSecrets(mqttConfigSchema, incoming, list[index]));
            list[index] = config;
            replaced = config;
          },
          audited('mqtt-publisher-replaced', params.name, principal),
        );
        const config = replaced as MqttConfig;
        await publishers.put(config);
        return view(config, publishers);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: 'deleteMqttPublisher',
      tag,
      summary: 'Delete an MQTT publisher',
      description: describe('Stops the publisher and removes it from the profile.'),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        const { profile, publishers } = services();
        await profile.update(
          (draft) => {
            const list = mqttOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            list.splice(index, 1);
          },
          audited('mqtt-publisher-deleted', params.name, principal),
        );
        await publishers.remove(params.name);
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Start`,
      operationId: 'startMqttPublisher',
      tag,
      summary: 'Start an MQTT publisher',
      description: describe(
        'Starts the publisher. When it cannot run — no collection selected, or a selected collection does not exist — it stays Off: the answer is still 200, with `status` Off and `reason` naming what is missing. The profile is not changed.',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the start.', schema: mqttPublisherStateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.start(params.name);
        deps.audit.info(
          {
            event: 'mqtt-publisher-started',
            publisher: params.name,
            username: principal?.user.username,
            status: state.status,
            ...(state.status === 'Off' && state.reason !== undefined
              ? { reason: state.reason }
              : {}),
          },
          state.status === 'Off' ? 'publisher start refused' : 'publisher started',
        );
        return state;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Stop`,
      operationId: 'stopMqttPublisher',
      tag,
      summary: 'Stop an MQTT publisher',
      description: describe(
        'Stops the publisher (Sparkplug: DDEATH and NDEATH first) and disconnects: status Off, reason `stopped`. The profile is not changed.',
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the stop.', schema: mqttPublisherStateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.stop(params.name);
        deps.audit.info(
          {
            event: 'mqtt-publisher-stopped',
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

function view(
  config: MqttConfig,
  publishers: PublisherManager<MqttConfig, MqttPublisherState>,
): MqttPublisherView {
  return {
    ...maskSecrets(mqttConfigSchema, config),
    state: publishers.get(config.name) ?? offState(config.name),
  };
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

function configOf(profile: ProfileService, name: string): MqttConfig {
  const config = profile.current().publishers.mqtt.find((publisher) => publisher.name === name);
  if (config === undefined) throw notFound(name);
  return config;
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(`MQTT publisher '${name}' does not exist.`);
}

function mqttOf(draft: ProfileInput): z.input<typeof mqttConfigSchema>[] {
  draft.publishers ??= {};
  draft.publishers.mqtt ??= [];
  return draft.publishers.mqtt;
}

function audited(event: string, publisher: string, principal: Principal | undefined) {
  // Names only: a configuration holds secrets, and the audit log must never.
  return { event, publisher, username: principal?.user.username };
}

function validated(candidate: unknown): MqttConfig {
  const result = mqttConfigSchema.safeParse(candidate);
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
function rejectMasks(config: MqttConfig): void {
  const masked = findSecrets(mqttConfigSchema, config).filter(
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
