/**
 * Configuration of a webhook publisher (spec §2.4), the same
 * shape in the profile (`publishers.webhooks[]`) and over the API. Messages the spec gives are
 * used word for word.
 */
import { z } from 'zod';
import { alarmFilterSchema } from '../../alarms/alarm-filter.js';
import { secret } from '../../profile/secret-fields.js';
import { segmentPattern } from '../../tags/tag-path.js';
import { loggingModes } from '../trigger/logging-mode.js';

/** Spec §2.4: saving without a Destination URL. */
export const missingUrlMessage = 'You must provide a webhook destination URL.';
/** Spec §2.4: an empty collection entry (or none at all). */
export const missingCollectionMessage = 'You must select a collection.';

const requiredText = (message: string) =>
  // abort: an empty value gets only the "required" message, not a format complaint as well.
  z.string({ error: message }).trim().min(1, { error: message, abort: true });

/** The destination: an http or https URL, sealed at rest. */
const destinationUrlSchema = secret(
  requiredText(missingUrlMessage)
    .refine(isHttpUrl, { error: 'The destination URL must be an http:// or https:// address.' })
    // Inside secret(): describe() makes a new schema, and only the marked one is a secret.
    .describe('Where each batch is POSTed. Sealed at rest, masked on the way out.'),
);

const noAuthentication = z.strictObject({ mode: z.literal('None') });
const bearerAuthentication = z.strictObject({
  mode: z.literal('Bearer token'),
  bearerToken: secret(requiredText('You must provide a bearer token.')),
});
const apiKeyAuthentication = z.strictObject({
  mode: z.literal('API key header'),
  apiKeyHeaderName: requiredText('You must provide an API key header name.').regex(
    /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/,
    { error: 'The API key header name must be a valid HTTP header name.' },
  ),
  apiKeyHeaderValue: secret(requiredText('You must provide an API key header value.')),
});
const basicAuthentication = z.strictObject({
  mode: z.literal('Basic auth'),
  basicAuthUsername: requiredText('You must provide a basic auth username.').refine(
    (name) => !name.includes(':'),
    {
      error: 'A basic auth username cannot contain a colon.',
    },
  ),
  basicAuthPassword: secret(requiredText('You must provide a basic auth password.')),
});

/** How the publisher authenticates to the receiver (spec §5 "outbound authentication"). */
export const webhookAuthenticationSchema = z
  .discriminatedUnion(
    'mode',
    [noAuthentication, bearerAuthentication, apiKeyAuthentication, basicAuthentication],
    {
      error: 'Authentication mode must be one of: None, Bearer token, API key header, Basic auth.',
    },
  )
  .meta({ id: 'WebhookAuthentication' });

export { type LoggingMode, loggingModes } from '../trigger/logging-mode.js';

/** A webhook publisher's configuration. */
export const webhookConfigSchema = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(segmentPattern, 'may only hold letters, digits and _ . : -')
      .describe('Unique name; also the segment of the health tags Publishers/<name>/….'),
    destinationUrl: destinationUrlSchema,
    authentication: webhookAuthenticationSchema.default({ mode: 'None' }),
    collections: z
      .array(requiredText(missingCollectionMessage), { error: missingCollectionMessage })
      .min(1, { error: missingCollectionMessage })
      .describe('Names of the collections published.'),
    loggingMode: z.enum(loggingModes).default('Snapshot'),
    updateIntervalSeconds: z
      .int({ error: 'The update interval must be a whole number of seconds from 1 to 86400.' })
      .min(1, { error: 'The update interval must be a whole number of seconds from 1 to 86400.' })
      .max(86_400, {
        error: 'The update interval must be a whole number of seconds from 1 to 86400.',
      })
      .default(10)
      .describe('Seconds between publishes.'),
    autoConnect: z.boolean().default(true).describe('Start the publisher when the profile loads.'),
    caFile: z
      .string()
      .min(1)
      .optional()
      .describe(
        'PEM file of extra CAs trusted for an https destination, besides the built-in ones.',
      ),
    everythingBufferSize: z
      .int()
      .min(1)
      .max(10_000_000)
      .default(100_000)
      .describe('Everything mode: updates kept between publishes; beyond, the oldest are dropped.'),
    signingSecret: secret(
      z.string().regex(/^whsec_[A-Za-z0-9+/=]{16,}$/, 'must be whsec_ followed by base64'),
    )
      .optional()
      .describe('Beyond the spec: Standard Webhooks signing secret (whsec_…). Sealed at rest.'),
    gzip: z.boolean().default(false).describe('Beyond the spec: gzip request bodies.'),
    storeAndForward: z
      .boolean()
      .optional()
      .describe(
        'Beyond the spec, default false: a batch whose 3 attempts failed is kept in the durable outbox (state directory) instead of dropped, and sent again, in order and before new batches, once the receiver answers.',
      ),
    bufferLimitMB: z
      .int()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'storeAndForward: most megabytes the outbox keeps (default 64); beyond, the oldest batches are dropped and counted.',
      ),
    alarms: alarmFilterSchema
      .optional()
      .describe(
        'Beyond the spec: also POST alarm transitions of the alarms these filters take, as soon as they happen, to the same URL (a JSON object of type tagd.alarm.transitions; docs/alarm-notifications.md).',
      ),
  })
  .meta({ id: 'WebhookPublisherConfig' });

/** A validated webhook publisher configuration, defaults applied, secrets in plaintext. */
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}
