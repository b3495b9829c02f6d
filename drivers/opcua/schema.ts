/**
 * Profile entry of an OPC UA driver. Loaded eagerly with the profile schema, so it must not
 * import node-opcua: NodeIds and security names are checked as text here.
 */
import { z } from 'zod';
import { secret } from '../../src/profile/secret-fields.js';
import {
  allowWritesField,
  componentNameSchema,
  relativeTagPathSchema,
  tagWriteFields,
  writeFieldIssues,
} from '../common-schema.js';

/**
 * A NodeId in the OPC UA string form: an optional `ns=<index>;` or `nsu=<uri>;` prefix, then
 * `i=` (numeric), `s=` (string), `g=` (GUID) or `b=` (base64 opaque).
 */
export const nodeIdPattern =
  /^(?:ns=\d{1,5};|nsu=[^;]+;)?(?:i=\d{1,10}|s=.+|g=[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}|b=[A-Za-z0-9+/]+={0,2})$/;

/** Security modes of the secure channel. */
export const opcuaSecurityModes = ['None', 'Sign', 'SignAndEncrypt'] as const;

/** Security policies tagd offers (the ones that need no RSA PKCS#1 v1.5 on current Node). */
export const opcuaSecurityPolicies = [
  'None',
  'Basic256Sha256',
  'Aes128_Sha256_RsaOaep',
  'Aes256_Sha256_RsaPss',
] as const;

const intervalMs = (what: string) => z.int().min(0).max(3_600_000).optional().describe(what);

const anonymousIdentity = z
  .strictObject({ kind: z.literal('anonymous') })
  .describe('No user: the session is anonymous.');

const usernameIdentity = z
  .strictObject({
    kind: z.literal('username'),
    username: z.string().min(1).max(256).describe('User name the server knows.'),
    password: secret(
      z.string().min(1).max(1024).describe('Password of the user. Sealed at rest, never logged.'),
    ),
  })
  .describe(
    'User name and password. The password crosses the network encrypted, by the channel ' +
      '(SignAndEncrypt) or with the security policy of the server’s user token policy; tagd ' +
      'refuses to send it in clear unless allowInsecurePassword is set.',
  );

/** Who the session is opened as. */
export const opcuaIdentitySchema = z.discriminatedUnion('kind', [
  anonymousIdentity,
  usernameIdentity,
]);

/** One tag: a variable of the server, monitored through a subscription. */
export const opcuaTagSchema = z
  .strictObject({
    name: relativeTagPathSchema,
    nodeId: z
      .string()
      .min(3)
      .max(4096)
      .regex(nodeIdPattern, 'must be a NodeId such as ns=2;s=Line1.Temperature or i=2258')
      .describe('The variable to monitor, e.g. `ns=2;s=Line1.Temperature`, `ns=3;i=1001`.'),
    samplingIntervalMs: intervalMs(
      'How often the server samples the variable, ms; 0 asks for the fastest it can do. ' +
        "Default: the driver's samplingIntervalMs.",
    ),
    publishingIntervalMs: intervalMs(
      "Publishing interval of the subscription that carries this tag, ms. Default: the driver's " +
        'publishingIntervalMs.',
    ),
    deadband: z
      .number()
      .nonnegative()
      .max(1e15)
      .optional()
      .describe(
        'Absolute deadband: a new value is reported only when it differs from the last one ' +
          'reported by more than this, in the variable’s own unit. Numeric variables only. ' +
          'Default: every change.',
      ),
    unit: z.string().max(32).optional(),
    description: z.string().max(256).optional(),
    ...tagWriteFields,
  })
  .superRefine((tag, context) => {
    for (const issue of writeFieldIssues(tag)) context.addIssue({ code: 'custom', ...issue });
  })
  .describe('A variable of the server, as the tag `<name>/<tag name>`.');

/** Profile entry of an OPC UA driver: one server endpoint, one session, its subscriptions. */
export const opcuaDriverSchema = z
  .strictObject({
    type: z.literal('opcua'),
    name: componentNameSchema,
    enabled: z.boolean().default(true),
    allowWrites: allowWritesField,
    endpointUrl: z
      .string()
      .max(4096)
      .regex(
        /^opc\.tcp:\/\/[^/\s:]+(?::\d{1,5})?(?:\/\S*)?$/,
        'must be opc.tcp://host[:port][/path]',
      )
      .describe('Endpoint of the server, e.g. `opc.tcp://10.0.0.7:4840/UA/Server`.'),
    securityMode: z
      .enum(opcuaSecurityModes)
      .default('None')
      .describe('None, Sign (messages signed) or SignAndEncrypt (signed and encrypted).'),
    securityPolicy: z
      .enum(opcuaSecurityPolicies)
      .optional()
      .describe(
        'Algorithms of the secure channel. Default: None with securityMode None, ' +
          'Basic256Sha256 otherwise.',
      ),
    identity: opcuaIdentitySchema
      .default({ kind: 'anonymous' })
      .describe('Anonymous, or a user name and password.'),
    allowInsecurePassword: z
      .boolean()
      .default(false)
      .describe(
        'Send the password even when it would cross the network in clear: the channel does ' +
          'not encrypt (securityMode None or Sign) and the server’s user token policy does ' +
          'not encrypt the password either. Only for a trusted network; the driver warns. ' +
          'Default false: the driver refuses to connect and says why.',
      ),
    applicationName: z
      .string()
      .min(1)
      .max(64)
      .default('tagd')
      .describe('Application name of the client, also the subject of its generated certificate.'),
    certificateFile: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe(
        'PEM certificate of the client. A relative path is resolved from the folder of the ' +
          'profile file. Default: a self-signed certificate generated once in ' +
          '`<state>/opcua/pki/own/`.',
      ),
    privateKeyFile: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('PEM private key of certificateFile (required with it), not encrypted.'),
    samplingIntervalMs: z
      .int()
      .min(0)
      .max(3_600_000)
      .default(1000)
      .describe(
        'Default sampling interval of the tags, ms; 0 asks for the fastest the server does.',
      ),
    publishingIntervalMs: z
      .int()
      .min(10)
      .max(3_600_000)
      .default(1000)
      .describe(
        'Default publishing interval, ms: tags sharing one interval share subscriptions of at ' +
          'most 1,000 monitored items each.',
      ),
    staleAfterMs: z
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(
        'A tag not updated for this long turns Stale. Default: never (a subscription only ' +
          'reports changes, so a steady value is not a stale one; a subscription that stops ' +
          'sending altogether turns its tags Stale by itself, see keepAliveIntervalMs).',
      ),
    keepAliveIntervalMs: z
      .int()
      .min(500)
      .max(600_000)
      .default(10_000)
      .describe(
        'How often the server must send a message on a subscription with nothing to report (a ' +
          'keep-alive), ms: the maxKeepAliveCount asked is this ÷ the publishing interval, at ' +
          'least 3. A subscription silent for longer (plus one publishing interval and 2 s) ' +
          'turns its tags Stale and is re-created.',
      ),
    sessionTimeoutMs: z
      .int()
      .min(10_000)
      .max(3_600_000)
      .default(60_000)
      .describe('Session timeout asked of the server, ms: how long it keeps the session alive.'),
    reconnectDelayMs: z
      .int()
      .min(10)
      .max(600_000)
      .default(1000)
      .describe('First wait before connecting again after a failure, ms; doubles.'),
    maxReconnectDelayMs: z
      .int()
      .min(10)
      .max(3_600_000)
      .default(30_000)
      .describe('Longest wait between connection attempts, ms.'),
    tags: z.array(opcuaTagSchema).min(1).max(100_000),
  })
  .refine((config) => config.maxReconnectDelayMs >= config.reconnectDelayMs, {
    message: 'maxReconnectDelayMs must be at least reconnectDelayMs',
    path: ['maxReconnectDelayMs'],
  })
  // The session must outlive a keep-alive window, or a quiet subscription would let it expire
  // (node-opcua refuses such a subscription).
  .refine((config) => config.keepAliveIntervalMs < config.sessionTimeoutMs, {
    message: 'keepAliveIntervalMs must be less than sessionTimeoutMs',
    path: ['keepAliveIntervalMs'],
  })
  .refine(
    (config) =>
      (config.securityMode === 'None') ===
      ((config.securityPolicy ?? (config.securityMode === 'None' ? 'None' : '')) === 'None'),
    {
      message:
        'securityPolicy None goes with securityMode None only, and securityMode None with it',
      path: ['securityPolicy'],
    },
  )
  .refine(
    (config) => (config.certificateFile === undefined) === (config.privateKeyFile === undefined),
    {
      message: 'certificateFile and privateKeyFile go together',
      path: ['privateKeyFile'],
    },
  );
// Duplicate tag names are the profile's rule, for every driver type (validate-profile.ts).

/** A validated OPC UA driver entry. */
export type OpcuaDriverConfig = z.infer<typeof opcuaDriverSchema>;

/** The security policy in effect: the configured one, or the default for the mode. */
export function effectiveSecurityPolicy(
  config: Pick<OpcuaDriverConfig, 'securityMode' | 'securityPolicy'>,
): (typeof opcuaSecurityPolicies)[number] {
  return config.securityPolicy ?? (config.securityMode === 'None' ? 'None' : 'Basic256Sha256');
}
