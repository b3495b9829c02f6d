/**
 * The listener sections of the profile: plain HTTP and HTTPS, with their connection limits.
 * The API listeners (`server.http`, `server.https`) and the extensions server
 * (`extensions.listen`, `extensions.https`) use the same rules, so each is made here from its
 * own default port.
 */
import { z } from 'zod';
import { secret } from './secret-fields.js';

/** What differs between two listeners of the same kind. */
export interface ListenerDefaults {
  /** Port used when the profile gives none. */
  port: number;
  /** Description in the JSON Schema. Default: the API listener's. */
  description?: string;
}

/**
 * Limits every listener has. A connection over `maxConnections`, or over
 * `maxConnectionsPerAddress` from one peer off this machine, is closed at once (the open ones
 * keep working), and peers off this machine together leave an eighth of `maxConnections` to
 * loopback peers (api/connection-slots.ts); a client that has not sent its headers, or the
 * whole request, in time gets 408 and is disconnected, so idle or slow connections cannot hold
 * the slots for long.
 */
function connectionLimits(maxConnections: number) {
  return {
    maxConnections: z
      .int()
      .min(1)
      .max(65_535)
      .default(maxConnections)
      .describe(
        'Most connections open at once; further ones are closed on arrival. Peers off this machine together get at most seven eighths of them: the rest is kept for loopback peers.',
      ),
    maxConnectionsPerAddress: z
      .int()
      .min(1)
      .max(65_535)
      .default(32)
      .describe(
        'Most connections one peer address off this machine holds at once; further ones are closed on arrival. Loopback peers are held to maxConnections only.',
      ),
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

/**
 * A plain HTTP listener: loopback by default, any other address only with `allowInsecure`
 * (passwords and tokens would cross the network in clear).
 */
export function httpListenerSchema(defaults: ListenerDefaults) {
  return z
    .strictObject({
      host: z
        .string()
        .min(1)
        .default('127.0.0.1')
        .describe('Address to bind. Loopback by default; any other needs allowInsecure.'),
      port: z
        .int()
        .min(0)
        .max(65_535)
        .default(defaults.port)
        .describe('TCP port; 0 picks a free one.'),
      allowInsecure: z
        .boolean()
        .default(false)
        .describe(
          'Permit plain HTTP on a non-loopback address (passwords would cross the network).',
        ),
      ...connectionLimits(256),
    })
    .superRefine(headersWithinRequest)
    .describe(defaults.description ?? 'Plain HTTP listener for apps on the same host.');
}

/** An HTTPS listener with its own certificate and key files. */
export function httpsListenerSchema(defaults: ListenerDefaults) {
  return z
    .strictObject({
      host: z
        .string()
        .min(1)
        .default('0.0.0.0')
        .describe('Address to bind; all IPv4 interfaces by default.'),
      port: z
        .int()
        .min(0)
        .max(65_535)
        .default(defaults.port)
        .describe('TCP port; 0 picks a free one.'),
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
    .describe(
      defaults.description ?? 'HTTPS listener for the plant network. Absent: no HTTPS listener.',
    );
}

/** A plain HTTP listener section, defaults applied. */
export type HttpListenerConfig = z.infer<ReturnType<typeof httpListenerSchema>>;
/** An HTTPS listener section, defaults applied. */
export type HttpsListenerConfig = z.infer<ReturnType<typeof httpsListenerSchema>>;
