/**
 * Profile entry of a generic MQTT subscriber driver: broker settings as the MQTT publisher's,
 * and subscriptions mapping topic filters to tags. Loaded eagerly with the profile schema, so it
 * must not import the mqtt client.
 */
import { z } from 'zod';
import { secret, secretMask } from '../../src/profile/secret-fields.js';
import { brokerProtocols, mqttAuthenticationSchema } from '../../src/publishers/mqtt/schema.js';
import { tagPathProblem } from '../../src/tags/tag-path.js';
import { allowWritesField, componentNameSchema } from '../common-schema.js';
import { jsonPointerProblem } from './json-pointer.js';
import {
  fillTagTemplate,
  parseTagTemplate,
  parseTopicFilter,
  tagTemplateProblem,
  topicFilterProblem,
  topicNameProblem,
} from './topic-filter.js';

/** Payload formats a subscription reads. */
export const mqttPayloadFormats = ['plain', 'json', 'tagd'] as const;
/** A payload format. */
export type MqttPayloadFormat = (typeof mqttPayloadFormats)[number];

/** Value types a subscription's tags take. */
export const mqttDataTypes = ['number', 'boolean', 'string'] as const;
/** A value type. */
export type MqttDataType = (typeof mqttDataTypes)[number];

/** Default of `maxTags`: tags one driver may hold, declared and created by wildcards. */
export const defaultMaxTags = 10_000;
/** Default of `staleAfterMs`, ms. */
export const defaultStaleAfterMs = 60_000;
/** Default of `maxPayloadBytes`. */
export const defaultMaxPayloadBytes = 65_536;

const pointer = (what: string) =>
  z
    .string()
    .max(1024)
    .superRefine((text, context) => {
      const problem = jsonPointerProblem(text);
      if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
    })
    .optional()
    .describe(`${what} A JSON Pointer (RFC 6901), e.g. /value or /data/0/v; format json only.`);

const brokerUrlSchema = secret(
  z
    .string()
    .min(1)
    .max(2048)
    // The mask is what the API answers for it: sent back, it keeps the stored URL.
    .refine((text) => text === secretMask || isBrokerUrl(text), {
      error: 'The broker URL must be an mqtt://, mqtts://, ws:// or wss:// address.',
    })
    .describe(
      'The broker, e.g. mqtts://broker.plant.local:8883. Sealed at rest, masked on the way out.',
    ),
);

/** One subscription: a topic filter and how its messages become tag values. */
export const mqttSubscriptionSchema = z
  .strictObject({
    topic: z
      .string()
      .superRefine((text, context) => {
        const problem = topicFilterProblem(text);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      })
      .describe(
        'MQTT topic filter, e.g. plant/line1/+/temperature or tagd/gw1/#. Each + captures one ' +
          'topic level and a trailing # the rest of the topic, for the tag template.',
      ),
    tag: z
      .string()
      .min(1)
      .max(256)
      .describe(
        'Tag path below the driver; {1}, {2}… stand for the wildcards of the topic in order ' +
          '(a # capture may span several levels), e.g. Line1/{1}/Temperature or {1}. Every ' +
          'wildcard must appear.',
      ),
    format: z
      .enum(mqttPayloadFormats)
      .default('plain')
      .describe(
        'plain: the payload is the value as text. json: a JSON document read at valuePath ' +
          '(timestampPath, qualityPath). tagd: the entry of a tagd json-per-tag publisher ' +
          '({fullTagId, utcTimestamp, quality, value}).',
      ),
    valuePath: pointer('Where the value is, required with format json.'),
    timestampPath: pointer(
      'Where the timestamp is: an ISO 8601 text with a time zone, or a number of epoch ' +
        'milliseconds (seconds with timestampUnit s). Default: the arrival time.',
    ),
    timestampUnit: z
      .enum(['ms', 's'])
      .default('ms')
      .describe('Unit of a numeric timestamp: epoch milliseconds or seconds.'),
    qualityPath: pointer(
      'Where the quality is: a name (Good, Stale, Uncertain, Bad, Unavailable), a boolean, or ' +
        'an OPC DA quality code (192–255 Good, 64–191 Stale, 0–63 Bad). Default: Good.',
    ),
    dataType: z
      .enum(mqttDataTypes)
      .default('number')
      .describe(
        'Type of the value: number (a JSON number or decimal text; integers beyond ±2^53 keep ' +
          'their exact digits in valueText), boolean (true/false or 1/0), string.',
      ),
    unit: z.string().min(1).max(64).optional().describe('Engineering unit, e.g. °C.'),
    description: z.string().min(1).max(256).optional().describe('Free text for operators.'),
    qos: z
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .optional()
      .describe("QoS of this subscription. Default: the driver's qos."),
    staleAfterMs: z
      .int()
      .min(0)
      .max(86_400_000)
      .optional()
      .describe("Refresh bound of this subscription's tags, ms (0: never). Default: the driver's."),
    acceptRetained: z
      .boolean()
      .default(true)
      .describe(
        'Take retained messages (the last value the broker kept, handed over at subscription). ' +
          'One whose payload has a timestamp is judged by it against staleAfterMs; one without ' +
          'is of unknown age and shown Stale, never Good, until a live message arrives. False ' +
          'ignores them: a tag then waits for a message published after the subscription.',
      ),
    writeTopic: z
      .string()
      .superRefine((text, context) => {
        const problem = topicNameProblem(text);
        if (problem !== undefined) context.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe(
        'Topic a write to this tag is published on (QoS 1, not retained), in the format of ' +
          'the subscription. Only for a topic without wildcards, and with allowWrites.',
      ),
    writeMin: z
      .number()
      .finite()
      .optional()
      .describe('Least value a client may write (numbers only).'),
    writeMax: z
      .number()
      .finite()
      .optional()
      .describe('Greatest value a client may write (numbers only).'),
  })
  .superRefine((subscription, context) => {
    const issue = (path: string, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    if (topicFilterProblem(subscription.topic) !== undefined) return;
    const filter = parseTopicFilter(subscription.topic);
    const problem = tagTemplateProblem(subscription.tag, filter.wildcards);
    if (problem !== undefined) issue('tag', problem);
    else {
      // Every capture stands in as one segment: the literal parts must make a valid path.
      const sample = fillTagTemplate(
        parseTagTemplate(subscription.tag),
        Array.from({ length: filter.wildcards }, () => 'x'),
      );
      const pathProblem = tagPathProblem(sample);
      if (pathProblem !== undefined) issue('tag', `Invalid tag path: ${pathProblem}`);
    }
    const paths = ['valuePath', 'timestampPath', 'qualityPath'] as const;
    if (subscription.format === 'json') {
      if (subscription.valuePath === undefined)
        issue('valuePath', 'valuePath is required with format json, e.g. /value');
    } else {
      for (const path of paths) {
        if (subscription[path] !== undefined)
          issue(
            path,
            subscription.format === 'tagd'
              ? `format tagd reads /value, /utcTimestamp and /quality; ${path} is for format json`
              : `${path} is for format json`,
          );
      }
    }
    if (subscription.writeTopic !== undefined && filter.wildcards > 0)
      issue('writeTopic', 'writeTopic is for a topic without wildcards');
    if (subscription.writeTopic === undefined) {
      if (subscription.writeMin !== undefined || subscription.writeMax !== undefined)
        issue('writeMin', 'writeMin and writeMax are for subscriptions with a writeTopic');
    } else if (
      subscription.writeMin !== undefined &&
      subscription.writeMax !== undefined &&
      subscription.writeMin > subscription.writeMax
    )
      issue('writeMax', 'writeMax must be at least writeMin');
    if (
      subscription.dataType !== 'number' &&
      (subscription.writeMin !== undefined || subscription.writeMax !== undefined)
    )
      issue('writeMin', 'writeMin and writeMax are for dataType number');
  });

/** A validated subscription. */
export type MqttSubscriptionConfig = z.infer<typeof mqttSubscriptionSchema>;

/** Profile entry of an MQTT subscriber driver. */
export const mqttDriverSchema = z
  .strictObject({
    type: z.literal('mqtt'),
    name: componentNameSchema,
    enabled: z.boolean().default(true),
    brokerUrl: brokerUrlSchema,
    clientId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('MQTT client id. Default: tagd-<host name>-<driver name>.'),
    authentication: mqttAuthenticationSchema.default({ mode: 'None' }),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'PEM file of extra CAs trusted for an mqtts/wss broker, besides the built-in ones.',
      ),
    qos: z
      .union([z.literal(0), z.literal(1), z.literal(2)])
      .default(1)
      .describe('QoS of the subscriptions: 0, 1 or 2.'),
    keepAliveSeconds: z
      .int()
      .min(5)
      .max(3600)
      .default(30)
      .describe(
        'MQTT keep-alive, s: a broker that stops answering is noticed after 1.5 times this.',
      ),
    staleAfterMs: z
      .int()
      .min(0)
      .max(86_400_000)
      .default(defaultStaleAfterMs)
      .describe(
        'A tag without a message for this long turns Stale (NoUpdate), ms; 0: never. A ' +
          'message whose own timestamp is older than this arrives Stale.',
      ),
    maxTags: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(defaultMaxTags)
      .describe(
        'Most tags the driver holds. A message that would create one more is dropped and ' +
          'counted (tagsRefused); the tags already there keep updating.',
      ),
    maxPayloadBytes: z
      .int()
      .min(16)
      .max(16_777_216)
      .default(defaultMaxPayloadBytes)
      .describe('Largest payload read; a larger one sets its tag Bad (payloadTooLarge).'),
    allowWrites: allowWritesField,
    reconnectDelayMs: z
      .int()
      .min(10)
      .max(600_000)
      .default(1000)
      .describe('First wait before reconnecting after a lost or refused connection, ms; doubles.'),
    maxReconnectDelayMs: z
      .int()
      .min(10)
      .max(3_600_000)
      .default(30_000)
      .describe('Longest wait between reconnection attempts, ms.'),
    subscriptions: z
      .array(mqttSubscriptionSchema)
      .min(1)
      .max(1000)
      .describe('Topic filters and the tags their messages feed, read in this order.'),
  })
  .superRefine((config, context) => {
    if (config.maxReconnectDelayMs < config.reconnectDelayMs)
      context.addIssue({
        code: 'custom',
        path: ['maxReconnectDelayMs'],
        message: 'maxReconnectDelayMs must be at least reconnectDelayMs',
      });
    // Topics without wildcards declare their tags at start: one tag, one topic.
    const seen = new Map<string, number>();
    config.subscriptions.forEach((subscription, index) => {
      if (subscription.tag.includes('{')) return;
      const first = seen.get(subscription.tag);
      if (first !== undefined)
        context.addIssue({
          code: 'custom',
          path: ['subscriptions', index, 'tag'],
          message: `tag ${subscription.tag} is already fed by subscriptions[${first}]`,
        });
      else seen.set(subscription.tag, index);
    });
  });

/** A validated MQTT subscriber driver entry. */
export type MqttDriverConfig = z.infer<typeof mqttDriverSchema>;

function isBrokerUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (brokerProtocols as readonly string[]).includes(url.protocol) && url.hostname !== '';
  } catch {
    return false;
  }
}
