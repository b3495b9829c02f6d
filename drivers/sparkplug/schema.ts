/**
 * Profile entry of a Sparkplug B host application driver (`type: sparkplug`): the broker as the
 * MQTT publisher names it (the same field schemas, so the URL is sealed and masked the same
 * way), the groups it follows, its host id, and the bounds of staleness, rebirth requests,
 * write confirmation and the drain of a clean stop. Loaded eagerly with the profile schema: imports neither mqtt nor
 * sparkplug-payload.
 */
import { z } from 'zod';
import { mqttConfigFields } from '../../src/publishers/mqtt/schema.js';
import { tagPathProblem } from '../../src/tags/tag-path.js';
import { allowWritesField, componentNameSchema } from '../common-schema.js';

// Sparkplug ids are single MQTT topic levels.
const sparkplugIdPattern = /^[^/+#]+$/;
const sparkplugId = (what: string) =>
  z.string().min(1).max(128).regex(sparkplugIdPattern, 'must not hold / + or #').describe(what);

const broker = mqttConfigFields.shape;

/** Profile entry of a Sparkplug B host application. */
export const sparkplugDriverSchema = z.strictObject({
  type: z.literal('sparkplug'),
  name: componentNameSchema,
  enabled: z.boolean().default(true),
  brokerUrl: broker.brokerUrl,
  clientId: broker.clientId.describe('MQTT client id. Default: tagd-<host name>-<driver name>.'),
  authentication: broker.authentication,
  caFile: broker.caFile,
  hostId: sparkplugId(
    'The Primary Host id: tagd publishes spBv1.0/STATE/<hostId> (retained, with the offline ' +
      'state as its Will), which edge nodes configured with this host id follow.',
  ),
  groupIds: z
    .array(sparkplugId('A Sparkplug group id.'))
    .min(1)
    .max(1000)
    .optional()
    .describe('The groups followed. Default: every group (spBv1.0/+/…).'),
  staleAfterMs: z
    .int()
    .min(1000)
    .max(86_400_000)
    .default(60_000)
    .describe(
      'An edge node that sends nothing for this long has every tag of it (and of its ' +
        'devices) turned Stale until it speaks again, ms. Sparkplug reports by exception: ' +
        'set it above the longest quiet period of the edge. Default 60,000.',
    ),
  rebirthIntervalMs: z
    .int()
    .min(100)
    .max(3_600_000)
    .default(5_000)
    .describe(
      'Least time between two rebirth requests (NCMD Node Control/Rebirth) to one edge node, ' +
        'ms: a broken edge is not flooded. Default 5,000.',
    ),
  stopDrainMs: z
    .int()
    .min(0)
    .max(10_000)
    .default(5_000)
    .describe(
      'Longest a clean stop (a shutdown, a restart, a reload of the driver) keeps ingesting ' +
        'after publishing its offline STATE, ms: until the broker delivered what it queued for ' +
        'the host and every edge node online sent its NDEATH (edges that follow this host do ' +
        'on the offline STATE and store from then on). 0 disconnects at once, dropping what ' +
        'the broker still holds for the host. Default 5,000.',
    ),
  allowWrites: allowWritesField,
  writableTags: z
    .array(
      z
        .string()
        .min(1)
        .max(256)
        .superRefine((pattern, context) => {
          const problem = tagPathProblem(pattern, true);
          if (problem !== undefined)
            context.addIssue({ code: 'custom', message: `Invalid tag pattern: ${problem}` });
        }),
    )
    .max(1000)
    .optional()
    .describe(
      'With allowWrites: the relayed tags clients may write, as patterns below the driver ' +
        '(`Plant1/Line1/**`). Default: every relayed tag (the edge still refuses tags it does ' +
        'not accept writes for).',
    ),
  writeConfirmTimeoutMs: z
    .int()
    .min(100)
    .max(600_000)
    .default(5_000)
    .describe(
      'How long a write waits for the edge’s DATA to confirm the value, ms; unconfirmed, the ' +
        'tag goes back to its last confirmed sample and the write reports Uncertain. ' +
        'Default 5,000.',
    ),
});

/** A validated Sparkplug driver entry, defaults applied, secrets in plaintext. */
export type SparkplugDriverConfig = z.infer<typeof sparkplugDriverSchema>;
