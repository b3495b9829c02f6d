/**
 * Delivery of one webhook batch (spec §5 "outbound authentication", §6, §7, §8): one POST of
 * one JSON array, tried at most 3 times, with waits of 1 s before attempt 2 and 2 s before
 * attempt 3, each attempt given 10 s to answer. Any non-2xx answer (3xx included: redirects are
 * not followed), a refused connection, a reset, a TLS failure or a timeout fails an attempt.
 *
 * Timing: the waits between attempts run on the injected Clock (tests move a ManualClock past
 * them). The 10 s response timeout is got's own timer on real time: it bounds network I/O,
 * which happens in real time whatever clock the scheduler is given.
 *
 * HTTPS trusts Node's built-in CAs plus the optional `caFile`; certificate checks are always on:
 * `rejectUnauthorized: true` is passed explicitly, so not even NODE_TLS_REJECT_UNAUTHORIZED=0
 * turns them off (got 14 happens to pass the key even when unset, which has the same effect;
 * the explicit value keeps it so whatever got does in a later release).
 *
 * Beyond the spec, and only when configured: Standard Webhooks signing
 * (https://www.standardwebhooks.com) and gzip request bodies.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Agent as HttpAgent, STATUS_CODES } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { rootCertificates } from 'node:tls';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Response } from 'got';
import type { Clock } from '../../clock.js';
import { replaceUrls, replaceWholeTokens } from '../../whole-tokens.js';
import type { PayloadEntry } from '../trigger/payload.js';
import type { AlarmDocument } from './alarm-document.js';
import type { WebhookConfig } from './schema.js';

const gzipAsync = promisify(gzip);

/** Attempts per batch, in total (spec §8; not configurable). */
export const deliveryAttempts = 3;
/** Wait before attempt 2 and before attempt 3, ms (spec §8; not configurable). */
export const retryWaitsMs: readonly number[] = [1_000, 2_000];
/** Time one attempt may take to be answered, ms (spec §7, §8; not configurable). */
export const responseTimeoutMs = 10_000;

/** Where and how batches are delivered: the parts of a {@link WebhookConfig} delivery uses. */
export type DeliveryTarget = Pick<
  WebhookConfig,
  'destinationUrl' | 'authentication' | 'signingSecret' | 'gzip'
>;

/** Options of {@link WebhookDelivery}. */
export interface DeliveryOptions {
  /** Runs the waits between attempts, and dates the signature and the outcome. */
  clock: Clock;
  /** tagd's version, sent as `User-Agent: tagd/<version>`. */
  version: string;
  /** Extra CA certificates (PEM) trusted besides Node's built-in ones: the `caFile` contents. */
  extraCa?: string;
}

/** Why one attempt failed. Never holds the URL or a credential. */
export interface AttemptFailure {
  /** The receiver's HTTP status, when it answered. */
  httpStatus?: number;
  /** What went wrong, e.g. `HTTP 500 Internal Server Error` or `connection refused (ECONNREFUSED)`. */
  error: string;
}

/** The outcome of one batch, all attempts included. */
export interface DeliveryOutcome {
  /** True when an attempt got a 2xx answer. */
  ok: boolean;
  /** True when the delivery was cancelled (publisher stopped) before it ended. */
  aborted: boolean;
  /** Attempts made, 0 to 3 (0 only when cancelled before the first). */
  attempts: number;
  /** Status of the last answer received, if any. */
  httpStatus?: number;
  /** Why each failed attempt failed, in order. */
  failures: AttemptFailure[];
  /** Clock time the first attempt began, epoch ms. */
  startedAt: number;
  /** Clock time the delivery ended, epoch ms. */
  endedAt: number;
  /** The batch's id: the `webhook-id` header when signing, else only for the log. */
  batchId: string;
}

/** Per-batch options of {@link WebhookDelivery.send}. */
export interface SendOptions {
  /** Cancels the delivery: a wait ends at once, a request in flight is aborted. */
  signal?: AbortSignal;
  /** Told of each failed attempt that will be followed by another, before the wait. */
  onRetry?: (attempt: number, failure: AttemptFailure, waitMs: number) => void;
  /** Attempts at most, 1 to {@link deliveryAttempts} (the default): a test sends one. */
  maxAttempts?: number;
}

type AttemptResult = { ok: true; httpStatus: number } | ({ ok: false } & AttemptFailure);

const aborted = Symbol('aborted');

/**
 * Sends batches to one destination. Holds keep-alive connection pools of its own, released by
 * {@link close}. One instance serves one publisher, one batch at a time.
 */
export class WebhookDelivery {
  private readonly url: URL;
  private readonly fixedHeaders: Record<string, string>;
  private readonly signingKey: Buffer | undefined;
  private readonly agents = {
    http: new HttpAgent({ keepAlive: true, maxSockets: 1 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 1 }),
  };
  private readonly certificateAuthority: string[] | undefined;

  constructor(
    private readonly target: DeliveryTarget,
    private readonly options: DeliveryOptions,
  ) {
    this.url = new URL(target.destinationUrl);
    this.fixedHeaders = {
      'content-type': 'application/json',
      'user-agent': `tagd/${options.version}`,
      ...(target.gzip ? { 'content-encoding': 'gzip' } : {}),
      ...authenticationHeaders(target.authentication),
    };
    this.signingKey =
      target.signingSecret === undefined ? undefined : signingKey(target.signingSecret);
    // Passing `ca` replaces Node's built-in list, so the built-in CAs are passed along with it.
    this.certificateAuthority =
      options.extraCa === undefined ? undefined : [...rootCertificates, options.extraCa];
  }

  /**
   * Delivers one batch (or one alarm document): serializes it once (and gzips it once when configured), then tries up
   * to {@link deliveryAttempts} times. Never throws; cancelling through `options.signal` ends it
   * early with `aborted` set.
   */
  async send(
    entries: readonly PayloadEntry[] | AlarmDocument,
    options: SendOptions = {},
  ): Promise<DeliveryOutcome> {
    const { signal, onRetry } = options;
    const maxAttempts = Math.min(options.maxAttempts ?? deliveryAttempts, deliveryAttempts);
    const clock = this.options.clock;
    const startedAt = clock.now();
    const batchId = `msg_${randomUUID()}`;
    const json = JSON.stringify(entries);
    // A string goes out as is: no 1 MB copy into a Buffer for a 10,000-tag batch.
    const body: string | Buffer = this.target.gzip ? await gzipAsync(json) : json;
    const failures: AttemptFailure[] = [];
    let httpStatus: number | undefined;
    let attempts = 0;
    const outcome = (ok: boolean, wasAborted: boolean): DeliveryOutcome => ({
      ok,
      aborted: wasAborted,
      attempts,
      ...(httpStatus !== undefined ? { httpStatus } : {}),
      failures,
      startedAt,
      endedAt: clock.now(),
      batchId,
    });

    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1) {
        const waited = await this.wait(retryWaitsMs[attempt - 2] ?? 0, signal);
        if (waited === aborted) return outcome(false, true);
      }
      if (signal?.aborted) return outcome(false, true);
      attempts = attempt;
      const result = await this.attempt(body, this.headers(batchId, json), signal);
      if (signal?.aborted) return outcome(false, true);
      if (result.httpStatus !== undefined) httpStatus = result.httpStatus;
      if (result.ok) return outcome(true, false);
      const failure: AttemptFailure = {
        ...(result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
        error: result.error,
      };
      failures.push(failure);
      if (attempt < maxAttempts) onRetry?.(attempt, failure, retryWaitsMs[attempt - 1] ?? 0);
    }
    return outcome(false, false);
  }

  /** Closes the pooled connections. The instance is not used afterwards. */
  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private headers(batchId: string, json: string): Record<string, string> {
    if (this.signingKey === undefined) return this.fixedHeaders;
    // Standard Webhooks: the id stays the same across attempts (the receiver's idempotency
    // key); the timestamp is the attempt's, so a retried batch is not refused as too old.
    const timestamp = Math.floor(this.options.clock.now() / 1000);
    return {
      ...this.fixedHeaders,
      'webhook-id': batchId,
      'webhook-timestamp': timestamp.toString(),
      'webhook-signature': standardWebhookSignature(this.signingKey, batchId, timestamp, json),
    };
  }

  private async attempt(
    body: string | Buffer,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<AttemptResult> {
    let response: Response<Buffer>;
    try {
      const { got } = await loadGot();
      response = await got.post(this.url, {
        body,
        headers,
        responseType: 'buffer',
        timeout: { request: responseTimeoutMs },
        retry: { limit: 0 },
        followRedirect: false,
        throwHttpErrors: false,
        agent: this.agents,
        https: {
          rejectUnauthorized: true,
          ...(this.certificateAuthority ? { certificateAuthority: this.certificateAuthority } : {}),
        },
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      return { ok: false, error: describeRequestError(error, this.url) };
    }
    const status = response.statusCode;
    if (status >= 200 && status < 300) return { ok: true, httpStatus: status };
    return { ok: false, httpStatus: status, error: describeStatus(status) };
  }

  private wait(ms: number, signal: AbortSignal | undefined): Promise<undefined | typeof aborted> {
    const clock = this.options.clock;
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(aborted);
      const onAbort = () => {
        clock.clearTimer(timer);
        resolve(aborted);
      };
      const timer = clock.setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(undefined);
      }, ms);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}

/** The header the configured authentication adds (spec §5 "outbound authentication"). */
export function authenticationHeaders(
  authentication: WebhookConfig['authentication'],
): Record<string, string> {
  switch (authentication.mode) {
    case 'None':
      return {};
    case 'Bearer token':
      return { authorization: `Bearer ${authentication.bearerToken}` };
    case 'API key header':
      return { [authentication.apiKeyHeaderName]: authentication.apiKeyHeaderValue };
    case 'Basic auth': {
      const pair = `${authentication.basicAuthUsername}:${authentication.basicAuthPassword}`;
      return { authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
    }
  }
}

/** The HMAC key of a Standard Webhooks secret: the base64 after `whsec_`. */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/**
 * The `webhook-signature` value of Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of
 * `<id>.<timestamp>.<body>`. The body signed is the JSON text, before any gzip: receivers
 * verify what they parse.
 * @param key the secret's key bytes ({@link signingKey}).
 * @param timestamp seconds since the Unix epoch.
 */
export function standardWebhookSignature(
  key: Buffer,
  id: string,
  timestamp: number,
  body: string,
): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** `HTTP 503 Service Unavailable`; the reason phrase is Node's, not the receiver's text. */
export function describeStatus(status: number): string {
  const phrase = STATUS_CODES[status];
  return phrase === undefined ? `HTTP ${status}` : `HTTP ${status} ${phrase}`;
}

/** True for the answers that mean the receiver refused the credential. */
export function isCredentialRejection(status: number | undefined): boolean {
  return status === 401 || status === 403;
}

const certificateCodes = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * A network failure in words, without the URL: the destination's address can hold a secret
 * (a token in its path or query), so any URL, and the destination's host (with its port),
 * username, password, path and query where they stand as whole tokens, are replaced by "the
 * destination".
 */
export function describeRequestError(error: unknown, url: URL): string {
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  if (name === 'TimeoutError') {
    return `no answer within ${responseTimeoutMs / 1000} s (timeout)`;
  }
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused (ECONNREFUSED)';
    case 'ECONNRESET':
      return 'connection reset (ECONNRESET)';
    case 'EPIPE':
      return 'connection closed while sending (EPIPE)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host name not resolved (${code})`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `destination unreachable (${code})`;
    case 'ETIMEDOUT':
      return 'connection timed out (ETIMEDOUT)';
  }
  if (typeof code === 'string' && certificateCodes.has(code)) {
    return `the destination's certificate is not trusted (${code})`;
  }
  const text = scrub(typeof message === 'string' ? message : String(error), url);
  return typeof code === 'string' ? `${text} (${code})` : text;
}

// Whole URLs, and the destination's parts only where they stand as whole tokens: a one-letter
// username must not be cut out of every word that holds the letter (whole-tokens.ts).
function scrub(text: string, url: URL): string {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const parts = [url.host, url.hostname, hostname, url.username, url.password]
    .flatMap((part) => [part, decoded(part)])
    .concat(url.pathname.length > 1 ? url.pathname : [], url.search);
  return replaceWholeTokens(replaceUrls(text, 'the destination'), parts, 'the destination');
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * got and its dependencies, imported on the first delivery rather than at start: they cost
 * about 95 ms of CPU to load, which a start with an auto-connecting webhook would otherwise
 * spend before the API answers.
 */
let gotModule: Promise<typeof import('got')> | undefined;

function loadGot(): Promise<typeof import('got')> {
  gotModule ??= import('got');
  return gotModule;
}
