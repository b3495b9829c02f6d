/**
 * Configuration of an MQTT publisher, the same shape in the profile (`publishers.mqtt[]`) and
 * over the API (`/api/v2/Publishers/Mqtt`). Names and messages follow the webhook publisher's.
 */
import { hostname } from 'node:os';
import { z } from 'zod';
import { alarmFilterSchema } from '../../alarms/alarm-filter.js';
import { secret } from '../../profile/secret-fields.js';
import { segmentPattern } from '../../tags/tag-path.js';
import { loggingModes } from '../trigger/logging-mode.js';

/** Saving without a broker URL. */
export const missingBrokerUrlMessage = 'You must provide an MQTT broker URL.';
/** An empty collection entry (or none at all), as for webhooks (spec §2.4). */
export const missingCollectionMessage = 'You must select a collection.';

const requiredText = (message: string) =>
  // abort: an empty value gets only the "required" message, not a format complaint as well.
  z.string({ error: message }).trim().min(1, { error: message, abort: true });

/** URL schemes the broker URL may use. */
export const brokerProtocols = ['mqtt:', 'mqtts:', 'ws:', 'wss:'] as const;

/** The broker: an mqtt, mqtts, ws or wss URL, sealed at rest (it may hold a credential). */
const brokerUrlSchema = secret(
  requiredText(missingBrokerUrlMessage)
    .refine(isBrokerUrl, {
      error: 'The broker URL must be an mqtt://, mqtts://, ws:// or wss:// address.',
    })
    // Inside secret(): describe() makes a new schema, and only the marked one is a secret.
    .describe(
      'The broker, e.g. mqtts://broker.plant.local:8883. Sealed at rest, masked on the way out.',
    ),
);

const noAuthentication = z.strictObject({ mode: z.literal('None') });
const passwordAuthentication = z.strictObject({
  mode: z.literal('Username password'),
  username: requiredText('You must provide a username.'),
  password: secret(requiredText('You must provide a password.')),
});
const certificateAuthentication = z.strictObject({
  mode: z.literal('Client certificate'),
  certFile: requiredText('You must provide a client certificate file.').describe(
    'PEM client certificate (chain). A relative path is resolved from the profile folder.',
  ),
  keyFile: requiredText('You must provide a client key file.').describe(
    'PEM private key of the client certificate. A relative path is resolved from the profile folder.',
  ),
  keyPassphrase: secret(z.string().min(1))
    .optional()
    .describe('Passphrase of an encrypted key. Sealed at rest.'),
});

/** How the publisher authenticates to the broker. */
export const mqttAuthenticationSchema = z
  .discriminatedUnion(
    'mode',
    [noAuthentication, passwordAuthentication, certificateAuthentication],
    { error: 'Authentication mode must be one of: None, Username password, Client certificate.' },
  )
  .meta({ id: 'MqttAuthentication' });

/** Payload formats. */
export const mqttFormats = ['json', 'json-per-tag', 'sparkplugB'] as const;
/** A payload format. */
export type MqttFormat = (typeof mqttFormats)[number];

// MQTT topic levels must not hold the wildcards (nor NUL, checked apart); Sparkplug ids are
// single levels.
const topicPrefixPattern = /^[^+#]+$/;
const sparkplugIdPattern = /^[^/+#]+$/;

const intervalMessage =
  'The update interval must be a whole number of milliseconds from 10 to 86400000.';

/** The fields of an MQTT publisher's configuration, without the rules that span fields. */
export const mqttConfigFields = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(64)
    .regex(segmentPattern, 'may only hold letters, digits and _ . : -')
    .describe('Unique name; also the segment of the health tags Publishers/<name>/….'),
  brokerUrl: brokerUrlSchema,
  clientId: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe('MQTT client id. Default: tagd-<host name>-<publisher name>.'),
  authentication: mqttAuthenticationSchema.default({ mode: 'None' }),
  caFile: z
    .string()
    .min(1)
    .optional()
    .describe('PEM file of extra CAs trusted for an mqtts/wss broker, besides the built-in ones.'),
  collections: z
    .array(requiredText(missingCollectionMessage), { error: missingCollectionMessage })
    .min(1, { error: missingCollectionMessage })
    .describe('Names of the collections published.'),
  loggingMode: z.enum(loggingModes).default('On Change'),
  updateIntervalMs: z
    .int({ error: intervalMessage })
    .min(10, { error: intervalMessage })
    .max(86_400_000, { error: intervalMessage })
    .default(1_000)
    .describe('Milliseconds between publishes (10 to 86,400,000).'),
  qos: z
    .union([z.literal(0), z.literal(1)], { error: 'qos must be 0 or 1.' })
    .default(1)
    .describe('MQTT QoS of every message: 0 (at most once) or 1 (acknowledged by the broker).'),
  retain: z
    .boolean()
    .optional()
    .describe(
      'Publish retained. Default: true for json-per-tag, false for json; never with sparkplugB.',
    ),
  autoConnect: z.boolean().default(true).describe('Start the publisher when the profile loads.'),
  topicPrefix: z
    .string()
    .min(1)
    .max(512)
    .regex(topicPrefixPattern, 'must not hold the wildcards + or #')
    .refine((prefix) => !prefix.startsWith('/') && !prefix.endsWith('/'), {
      error: 'must not begin or end with /',
    })
    .refine((prefix) => !prefix.includes('\u0000'), { error: 'must not hold a NUL character' })
    .optional()
    .describe('Topic prefix of the json formats. Default: tagd/<host name>.'),
  format: z
    .enum(mqttFormats)
    .default('json')
    .describe(
      'json: <topicPrefix>/<collection>, an array of entries. json-per-tag: <topicPrefix>/<fullTagId>, one entry. sparkplugB: Sparkplug B 3.0 (groupId, edgeNodeId).',
    ),
  groupId: z
    .string()
    .min(1)
    .max(128)
    .regex(sparkplugIdPattern, 'must not hold / + or #')
    .optional()
    .describe('sparkplugB: the Sparkplug group id.'),
  edgeNodeId: z
    .string()
    .min(1)
    .max(128)
    .regex(sparkplugIdPattern, 'must not hold / + or #')
    .optional()
    .describe('sparkplugB: the edge node id of this gateway.'),
  primaryHostId: z
    .string()
    .min(1)
    .max(128)
    .regex(sparkplugIdPattern, 'must not hold / + or #')
    .optional()
    .describe(
      'sparkplugB: the host id of the Primary Host Application. The publisher follows its STATE ' +
        '(spBv1.0/STATE/<primaryHostId>): births only while it is online; while it is offline ' +
        'or the broker is unreachable, data is kept in the durable outbox and sent afterwards, ' +
        'flagged is_historical. Default: none (no store-and-forward).',
    ),
  acceptWrites: z
    .boolean()
    .default(false)
    .describe(
      'sparkplugB: carry out DCMD writes to writable tags through the tag writer (the checks ' +
        'of POST /api/v2/Tags/Write), audited. Default false: every DCMD write is refused.',
    ),
  bufferLimitMB: z
    .int()
    .min(1)
    .max(4096)
    .default(64)
    .describe(
      'json formats, and sparkplugB with primaryHostId: most megabytes the durable outbox keeps while the broker (or the primary host) is unreachable; beyond, the oldest messages are dropped and counted.',
    ),
  everythingBufferSize: z
    .int()
    .min(1)
    .max(10_000_000)
    .default(100_000)
    .describe('Everything mode: updates kept between publishes; beyond, the oldest are dropped.'),
  alarms: alarmFilterSchema
    .optional()
    .describe(
      "Also publish alarm transitions of the alarms these filters take: json formats on <topicPrefix>/alarms/<name> (through the outbox, at the publisher's qos and retain); sparkplugB as node metrics Alarms/<name>/State, Active, Acknowledged in NBIRTH and NDATA.",
    ),
});

/** An MQTT publisher's configuration. */
export const mqttConfigSchema = mqttConfigFields
  .superRefine((config, context) => {
    if (config.format !== 'sparkplugB') {
      for (const key of ['primaryHostId', 'acceptWrites'] as const) {
        if (key === 'acceptWrites' ? config[key] !== true : config[key] === undefined) continue;
        context.addIssue({
          code: 'custom',
          path: [key],
          message: `${key} applies to the sparkplugB format only.`,
        });
      }
      return;
    }
    for (const key of ['groupId', 'edgeNodeId'] as const) {
      if (config[key] === undefined) {
        context.addIssue({
          code: 'custom',
          path: [key],
          message: `You must provide ${key === 'groupId' ? 'a group id' : 'an edge node id'} for Sparkplug B.`,
        });
      }
    }
    if (config.retain === true) {
      context.addIssue({
        code: 'custom',
        path: ['retain'],
        message: 'Sparkplug B messages are never retained.',
      });
    }
  })
  .meta({ id: 'MqttPublisherConfig' });

/** A validated MQTT publisher configuration, defaults applied, secrets in plaintext. */
export type MqttConfig = z.infer<typeof mqttConfigSchema>;

/** The client id: the configured one, else `tagd-<host name>-<publisher name>`. */
export function clientIdOf(config: MqttConfig, host = hostname()): string {
  return config.clientId ?? `tagd-${host}-${config.name}`;
}

/** The topic prefix of the json formats: the configured one, else `tagd/<host name>`. */
export function topicPrefixOf(config: MqttConfig, host = hostname()): string {
  return config.topicPrefix ?? `tagd/${host.replace(/[+#/]/g, '_')}`;
}

/** Whether messages are retained: the configured value, else true for json-per-tag only. */
export function retainOf(config: MqttConfig): boolean {
  if (config.format === 'sparkplugB') return false;
  return config.retain ?? config.format === 'json-per-tag';
}

function isBrokerUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (brokerProtocols as readonly string[]).includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}
