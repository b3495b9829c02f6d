/**
 * The profile: everything an installation configures, in one JSON file. Every object rejects unknown keys so a typo is an error, not a silent default.
 * Sections grow with the features that use them.
 */
import { z } from 'zod';
import { driverConfigSchema } from '../../drivers/registry.js';
import { historyConfigSchema } from '../history/history-config.js';
import { webhookConfigSchema } from '../publishers/webhook/schema.js';
import { queryLimitsSchema } from '../queries/query-limits.js';
import { tagPathProblem } from '../tags/tag-path.js';
import { secret } from './secret-fields.js';

/**
 * Limits both listeners share. A connection over `maxConnections` is closed at once (the open
 * ones keep working); a client that has not sent its headers, or the whole request, in time gets
 * 408 and is disconnected, so idle or slow connections cannot hold the slots.
 */
function connectionLimits(maxConnections: number) {
  return {
    maxConnections: z
      .int()
      .min(1)
      .max(65_535)
      .default(maxConnections)
      .describe('Most connections open at once; further ones are closed on arrival.'),
    headersTimeoutMs: z
      .int()
      .min(100)
      .max(600_000)
      .default(10_000)
      .describe(
        'Time a client has to send the request headers, from its first byte or connect, ms.',
      ),
    requestTimeoutMs: z
      .int()
      .min(100)
      .max(3_600_000)
      .default(30_000)
      .describe('Time a client has to send the whole request (headers and body), ms.'),
  };
}

// Node refuses a headers timeout longer than the request timeout; say so at the profile check.
function headersWithinRequest(
  listener: { headersTimeoutMs: number; requestTimeoutMs: number },
  context: z.RefinementCtx,
): void {
  if (listener.headersTimeoutMs > listener.requestTimeoutMs) {
    context.addIssue({
      code: 'custom',
      path: ['headersTimeoutMs'],
      message: 'must not be longer than requestTimeoutMs',
    });
  }
}

const httpListenerSchema = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('Address to bind. Loopback by default; any other needs allowInsecure.'),
    port: z.int().min(0).max(65_535).default(8080).describe('TCP port; 0 picks a free one.'),
    allowInsecure: z
      .boolean()
      .default(false)
      .describe('Permit plain HTTP on a non-loopback address (passwords would cross the network).'),
    ...connectionLimits(256),
  })
  .superRefine(headersWithinRequest)
  .describe('Plain HTTP listener for apps on the same host.');

const httpsListenerSchema = z
  .strictObject({
    host: z
      .string()
      .min(1)
      .default('0.0.0.0')
      .describe('Address to bind; all IPv4 interfaces by default.'),
    port: z.int().min(0).max(65_535).default(8443).describe('TCP port; 0 picks a free one.'),
    certFile: z
      .string()
      .min(1)
      .describe(
        'PEM certificate chain file: the server certificate first, then intermediates. A relative path is resolved from the folder of the profile file.',
      ),
    keyFile: z
      .string()
      .min(1)
      .describe(
        'PEM private key file of the certificate. A relative path is resolved from the folder of the profile file.',
      ),
    keyPassphrase: secret(z.string().min(1))
      .optional()
      .describe('Passphrase of an encrypted private key. Sealed in the profile file.'),
    minVersion: z
      .enum(['TLSv1.2', 'TLSv1.3'])
      .default('TLSv1.2')
      .describe('Oldest TLS version accepted.'),
    handshakeTimeoutMs: z
      .int()
      .min(100)
      .max(120_000)
      .default(10_000)
      .describe(
        'A client that has not completed the TLS handshake within this time is disconnected, ms.',
      ),
    ...connectionLimits(256),
  })
  .superRefine(headersWithinRequest)
  .describe('HTTPS listener for the plant network. Absent: no HTTPS listener.');

const serverSchema = z
  .strictObject({ http: httpListenerSchema.prefault({}), https: httpsListenerSchema.optional() })
  .describe('API listeners.');

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
  })
  .describe('Publishers pushing collections to receivers.');

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
  })
  .describe('tagd profile');

/** A validated profile, defaults applied. */
export type Profile = z.infer<typeof profileSchema>;
/** A profile as written in the file, before defaults. */
export type ProfileInput = z.input<typeof profileSchema>;
