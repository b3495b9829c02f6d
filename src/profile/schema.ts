/**
 * The profile: everything an installation configures, in one JSON file. Every object rejects unknown keys so a typo is an error, not a silent default.
 * Sections grow with the features that use them.
 */
import { z } from 'zod';
import { driverConfigSchema } from '../../drivers/registry.js';
import { alarmDefinitionSchema } from '../alarms/alarm-schema.js';
import { assistantConfigSchema } from '../assistant/assistant-config.js';
import { extensionsSchema } from '../extensions/extensions-config.js';
import { historyConfigSchema } from '../history/history-config.js';
import { notificationsSchema } from '../notifications/notifications-schema.js';
import { mqttConfigSchema } from '../publishers/mqtt/schema.js';
import { webhookConfigSchema } from '../publishers/webhook/schema.js';
import { queryLimitsSchema } from '../queries/query-limits.js';
import { tagPathProblem } from '../tags/tag-path.js';
import { themesSchema } from '../themes/theme-schema.js';
import { httpListenerSchema, httpsListenerSchema } from './listener-schema.js';

/**
 * One entry of the profile's `drivers[]`: the configuration of any known driver type, told apart
 * by `type` (each driver's `schema.ts`, gathered by `drivers/registry.ts`). Parts that handle
 * driver entries as configuration (the API's Drivers routes) take it from the profile, which
 * owns what a profile holds, rather than from the drivers.
 */
export { type DriverConfig, driverConfigSchema } from '../../drivers/registry.js';

const serverSchema = z
  .strictObject({
    http: httpListenerSchema({ port: 8080 }).prefault({}),
    https: httpsListenerSchema({ port: 8443 }).optional(),
    metrics: z
      .strictObject({
        allowLoopbackWithoutToken: z
          .boolean()
          .default(true)
          .describe(
            'Whether a peer on loopback (127.0.0.0/8, ::1) may read GET /metrics without a token; others always need a token with MetricsView. Set false when a reverse proxy on this machine forwards requests from the network: they reach tagd from loopback.',
          ),
      })
      .prefault({})
      .describe('Access to the Prometheus endpoint GET /metrics.'),
  })
  .describe('API listeners, and access to /metrics.');

const securitySchema = z
  .strictObject({
    accessTokenMinutes: z
      .int()
      .min(1)
      .max(1440)
      .default(15)
      .describe('Lifetime of access tokens, minutes.'),
    refreshTokenDays: z
      .int()
      .min(1)
      .max(90)
      .default(7)
      .describe('Lifetime of refresh tokens, days.'),
    sessionLifetimeHours: z
      .int()
      .min(1)
      .max(2160)
      .default(168)
      .describe(
        'Absolute lifetime of a sign-in, hours, counted from the password (and two-factor) check: no renewal or refresh-token rotation extends it; then sign in again. Service tokens are not affected.',
      ),
    writesPerSecond: z
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .describe(
        'Tag values one account may write per second (each item of a write request counts), on average; beyond, POST /api/v2/Tags/Write answers 429. Default: 20.',
      ),
  })
  .describe('Sign-in tokens and the per-account write rate.');

const tagSourceSchema = z
  .string()
  .min(1)
  .superRefine((source, context) => {
    const problem = tagPathProblem(source, true);
    if (problem !== undefined) {
      context.addIssue({ code: 'custom', message: `Invalid tag path or pattern: ${problem}` });
    }
  })
  .describe('A tag path, or a pattern where * is one segment and ** any depth.');

const licenseSchema = z
  .strictObject({
    file: z
      .string()
      .min(1)
      .describe('Signed license file (JSON). A relative path is resolved from the profile folder.'),
  })
  .describe(
    'The license: its edition decides the licensed features (data relay: server, enterprise).',
  );

const publishersSchema = z
  .strictObject({
    webhooks: z.array(webhookConfigSchema).default([]).describe('Webhook publishers.'),
    mqtt: z.array(mqttConfigSchema).default([]).describe('MQTT publishers.'),
  })
  .describe('Publishers pushing collections to receivers and brokers.');

/** A named set of tags that publishers and history refer to. */
export const collectionSchema = z.strictObject({
  name: z
    .string()
    .min(1)
    .max(128)
    .regex(
      /^[A-Za-z0-9_.:-]+( [A-Za-z0-9_.:-]+)*$/,
      'may hold letters, digits, _ . : - and single spaces',
    )
    .describe('Unique collection name.'),
  members: z.array(tagSourceSchema).min(1).describe('Tag paths and patterns in the collection.'),
});

const alarmJournalSchema = z
  .strictObject({
    retentionDays: z
      .int()
      .min(1)
      .max(36_500)
      .default(365)
      .describe(
        'Journal entries older than this many days are deleted (checked hourly). Default 365.',
      ),
  })
  .describe('The alarm journal (a SQLite file in the state directory).');

/** The whole profile. */
export const profileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Path or URL of the JSON Schema, for editors.'),
    server: serverSchema.prefault({}),
    security: securitySchema.prefault({}),
    queries: queryLimitsSchema.prefault({}),
    drivers: z
      .array(driverConfigSchema)
      .default([])
      .describe('Field drivers, one per device or bus.'),
    collections: z.array(collectionSchema).default([]),
    license: licenseSchema.optional(),
    history: historyConfigSchema.optional(),
    publishers: publishersSchema.prefault({}),
    extensions: extensionsSchema.optional(),
    themes: themesSchema.optional(),
    alarms: z
      .array(alarmDefinitionSchema)
      .default([])
      .describe('Alarm definitions: conditions on tags, with the ISA-18.2 life cycle.'),
    alarmJournal: alarmJournalSchema.optional(),
    notifications: notificationsSchema.optional(),
    assistant: assistantConfigSchema.prefault({}),
  })
  .describe('tagd profile');

/** A validated profile, defaults applied. */
export type Profile = z.infer<typeof profileSchema>;
/** A profile as written in the file, before defaults. */
export type ProfileInput = z.input<typeof profileSchema>;
