/**
 * The connection of one MQTT publisher to its broker: a fresh `mqtt` client per attempt (so
 * each attempt can carry its own Will, as Sparkplug's NDEATH with a new bdSeq needs), retried
 * after a capped, doubling wait on the injected clock, and a log that follows the outage
 * instead of repeating every failed attempt.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { rootCertificates } from 'node:tls';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { Clock, TimerHandle } from '../../clock.js';
import { describeBrokerError, isCredentialRefusal } from './broker-errors.js';

/** First wait before a new attempt after a failure, ms. */
export const reconnectDelayMs = 1_000;
/** Longest wait between attempts, ms: the doubling stops here. */
export const maxReconnectDelayMs = 30_000;
/** Time the broker has to accept a connection (CONNACK), ms. */
export const connectTimeoutMs = 10_000;
/** Least time between two "still failing" log lines of one outage, ms. */
export const outageSummaryIntervalMs = 60_000;
/**
 * Longest a stop waits for the last messages (Sparkplug's DDEATH and NDEATH) and for the
 * acknowledgements still due before it drops the connection, ms. An unreachable broker never
 * answers: without a bound, Stop, a reconfiguration and the daemon's shutdown would hang.
 */
export const stopGraceMs = 5_000;

/** Credentials and trust of a connection, read from the profile's files by the publisher. */
export interface BrokerTlsAndAuth {
  username?: string;
  password?: string;
  /** Extra CA certificates (PEM), trusted besides Node's built-in ones. */
  extraCa?: string;
  /** Client certificate and key (PEM) and the key's passphrase. */
  cert?: string;
  key?: string;
  passphrase?: string;
}

/**
 * The options of every connection tagd makes to a broker as a publisher (the publisher's and
 * the test publish's): MQTT 5, a clean session, no reconnection inside the client (the owner
 * retries), {@link connectTimeoutMs}, and the credentials and trust of `auth`. Certificate
 * checks are never turned off, not even by NODE_TLS_REJECT_UNAUTHORIZED=0.
 */
export function brokerClientOptions(clientId: string, auth: BrokerTlsAndAuth): IClientOptions {
  return {
    clientId,
    protocolVersion: 5,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: connectTimeoutMs,
    ...(auth.username !== undefined ? { username: auth.username } : {}),
    ...(auth.password !== undefined ? { password: auth.password } : {}),
    // Passing `ca` replaces Node's built-in list, so the built-in CAs go along with it.
    ...(auth.extraCa !== undefined ? { ca: [...rootCertificates, auth.extraCa] } : {}),
    ...(auth.cert !== undefined ? { cert: auth.cert } : {}),
    ...(auth.key !== undefined ? { key: auth.key } : {}),
    ...(auth.passphrase !== undefined ? { passphrase: auth.passphrase } : {}),
    rejectUnauthorized: true,
  };
}

/** What the owner of a connection is told. */
export interface ConnectionHandlers {
  /**
   * Called before each attempt; its options are added to the connect options (Sparkplug: the
   * NDEATH Will with this connection's bdSeq).
   */
  prepare?: () => Promise<Partial<IClientOptions>>;
  /** The broker accepted the connection. */
  connected: (client: MqttClient) => void;
  /** The connection was lost or an attempt failed; a new attempt is scheduled. */
  disconnected: (reason: string) => void;
}

/** Options of {@link BrokerConnection}. */
export interface BrokerConnectionOptions {
  brokerUrl: string;
  clientId: string;
  auth: BrokerTlsAndAuth;
  clock: Clock;
  /** The publisher's logger. */
  log: Logger;
  /** The publisher's name, for the messages. */
  name: string;
  /** What the owner is, as the log lines name it. Default `MQTT publisher`. */
  role?: string;
}

/** One publisher's broker connection. */
export class BrokerConnection {
  private client: MqttClient | undefined;
  private live: MqttClient | undefined;
  private retryTimer: TimerHandle | undefined;
  private delayMs = reconnectDelayMs;
  private running = false;
  private readonly url: URL;
  /** Set while an outage lasts: since when, attempts, the reason last logged. */
  private outage: { since: number; attempts: number; logged: string; loggedAt: number } | undefined;
  private lastError: { text: string; code?: number } | undefined;
  private readonly role: string;
  /** Counts stops: a restart whose end was overtaken by a stop does not connect again. */
  private stops = 0;

  constructor(
    private readonly options: BrokerConnectionOptions,
    private readonly handlers: ConnectionHandlers,
  ) {
    this.url = new URL(options.brokerUrl);
    this.role = options.role ?? 'MQTT publisher';
  }

  /** The connected client, or undefined while not connected. */
  get connected(): MqttClient | undefined {
    return this.live;
  }

  /** Begins connecting (at once). Idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.delayMs = reconnectDelayMs;
    this.attemptSafely();
  }

  /**
   * Ends the connection. `beforeEnd` runs first on a live connection (Sparkplug's DDEATH and
   * NDEATH); then the client sends DISCONNECT, so the broker does not publish the Will.
   */
  async stop(beforeEnd?: (client: MqttClient) => Promise<void>): Promise<void> {
    this.stops++;
    await this.end(beforeEnd);
  }

  /**
   * Ends the session as {@link stop} does (`beforeEnd` first, then DISCONNECT: no Will) and
   * connects again at once, with a new `prepare` (Sparkplug: a new bdSeq). Sparkplug 3.0's
   * answer to the primary host going offline. Nothing happens when not running; a stop called
   * meanwhile wins.
   */
  async restart(beforeEnd?: (client: MqttClient) => Promise<void>): Promise<void> {
    if (!this.running) return;
    const stops = this.stops;
    await this.end(beforeEnd);
    if (this.stops === stops) this.start();
  }

  private async end(beforeEnd?: (client: MqttClient) => Promise<void>): Promise<void> {
    this.running = false;
    const clock = this.options.clock;
    clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    const live = this.live;
    this.client = undefined;
    this.live = undefined;
    if (client === undefined) return;
    // One deadline for the whole graceful part, set before anything waits (so a test's clock can
    // be advanced right after calling stop).
    let graceTimer: TimerHandle | undefined;
    let realGraceTimer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => {
      graceTimer = clock.setTimeout(() => resolve('timeout'), stopGraceMs);
      // Also in real time: a clock that is not advanced (a test's manual clock, a stalled
      // event source) must never leave a stop, and the reload or shutdown behind it, waiting.
      realGraceTimer = setTimeout(() => resolve('timeout'), stopGraceMs);
    });
    const closed = new Promise<'closed'>((resolve) =>
      client.once('close', () => resolve('closed')),
    );
    try {
      if (live !== undefined && beforeEnd !== undefined) {
        const last = beforeEnd(live).then(
          () => 'sent' as const,
          (error: unknown) => {
            this.options.log.debug({ err: error }, 'Last messages before disconnecting not sent.');
            return 'failed' as const;
          },
        );
        await Promise.race([last, graceOver, closed]);
      }
      // mqtt.js's own graceful end waits for `outgoingEmpty`, which never comes when the broker
      // stopped answering: the wait is done here, bounded, and the end is forced after it. A
      // forced end calls back every message still unacknowledged with an error, so the
      // publisher keeps those in its outbox.
      let graceful = live !== undefined;
      if (graceful && hasOutgoing(client)) {
        const empty = new Promise<'empty'>((resolve) =>
          client.once('outgoingEmpty', () => resolve('empty')),
        );
        graceful = (await Promise.race([empty, graceOver, closed])) === 'empty';
      }
      const ended = new Promise<'ended'>((resolve) =>
        client.end(!graceful, {}, () => resolve('ended')),
      );
      if ((await Promise.race([ended, graceOver])) === 'timeout') {
        // The DISCONNECT went out but the socket does not close (the peer does not answer):
        // destroying the stream ends the client (its end callback waits for the close).
        client.stream?.destroy();
        await Promise.race([ended, delay(stopGraceMs)]);
      }
    } finally {
      clock.clearTimer(graceTimer);
      clearTimeout(realGraceTimer);
    }
    if (this.outage !== undefined) {
      this.options.log.info(
        `${this.role} '${this.options.name}' stopped while the broker was unreachable ` +
          `(${this.outage.attempts} failed attempts since ${iso(this.outage.since)}).`,
      );
      this.outage = undefined;
    }
  }

  // Whatever an attempt throws is a failed attempt, retried on the backoff: nothing of a
  // connection may escape as an unhandled rejection, which would reach the daemon.
  private attemptSafely(): void {
    this.attempt().catch((error: unknown) => {
      this.options.log.error({ err: error }, 'MQTT connection attempt failed unexpectedly.');
      this.attemptFailed(`the connection attempt failed (${messageOf(error)})`, undefined, false);
    });
  }

  private async attempt(): Promise<void> {
    this.retryTimer = undefined;
    if (!this.running) return;
    const { brokerUrl, clientId, auth } = this.options;
    let extra: Partial<IClientOptions> = {};
    try {
      extra = (await this.handlers.prepare?.()) ?? {};
    } catch (error) {
      this.options.log.error({ err: error }, 'Preparing the MQTT connection failed.');
    }
    if (!this.running) return;
    this.lastError = undefined;
    let client: MqttClient;
    try {
      client = this.createClient(brokerUrl, clientId, auth, extra);
    } catch (error) {
      // mqtt builds the TLS context synchronously, inside connect(): OpenSSL refusing the
      // client certificate, key or CAs throws here. The files were checked when the profile was
      // saved and when the publisher started, so this is what OpenSSL alone refuses; it is a
      // failed attempt like an unreachable broker, never an exception out of the publisher.
      this.attemptFailed(`the TLS set-up failed (${messageOf(error)})`, undefined, false);
      return;
    }
    this.client = client;
    client.on('error', (error) => {
      const code = (error as { code?: unknown }).code;
      this.lastError = {
        text: describeBrokerError(error, this.url),
        ...(typeof code === 'number' ? { code } : {}),
      };
    });
    client.on('connect', () => {
      if (this.client !== client) return;
      this.live = client;
      this.delayMs = reconnectDelayMs;
      const outage = this.outage;
      this.outage = undefined;
      if (outage !== undefined) {
        this.options.log.info(
          { attempts: outage.attempts, since: iso(outage.since) },
          `${this.role} '${this.options.name}' connected to the broker again after ` +
            `${outage.attempts} failed attempts since ${iso(outage.since)}.`,
        );
      } else {
        this.options.log.info(`${this.role} '${this.options.name}' connected to the broker.`);
      }
      this.handlers.connected(client);
    });
    client.on('close', () => {
      if (this.client !== client) {
        // A client stop() let go of, closed by the broker: forced, so its unacknowledged
        // messages are called back (with an error) instead of waiting for a PUBACK forever.
        if (!client.disconnecting) client.end(true);
        return;
      }
      this.client = undefined;
      const wasLive = this.live === client;
      this.live = undefined;
      // Forced: the client calls back every message still waiting for its PUBACK with an error.
      client.end(true);
      const reason =
        this.lastError?.text ??
        (wasLive ? 'the broker closed the connection' : 'the connection could not be made');
      this.attemptFailed(reason, this.lastError?.code, wasLive);
    });
  }

  /** Logs a failed attempt or a lost connection, tells the owner and schedules the next one. */
  private attemptFailed(reason: string, code: number | undefined, wasLive: boolean): void {
    this.failed(reason, code, wasLive);
    this.handlers.disconnected(reason);
    if (!this.running) return;
    const delay = this.delayMs;
    this.delayMs = Math.min(this.delayMs * 2, maxReconnectDelayMs);
    this.options.clock.clearTimer(this.retryTimer);
    this.retryTimer = this.options.clock.setTimeout(() => this.attemptSafely(), delay);
  }

  private createClient(
    brokerUrl: string,
    clientId: string,
    auth: BrokerTlsAndAuth,
    extra: Partial<IClientOptions>,
  ): MqttClient {
    return connect(brokerUrl, {
      ...brokerClientOptions(clientId, auth),
      keepalive: 30,
      // Messages go out only while connected: no unbounded queue inside the client.
      queueQoSZero: false,
      ...extra,
    });
  }

  private failed(reason: string, code: number | undefined, wasLive: boolean): void {
    const now = this.options.clock.now();
    const name = this.options.name;
    const hint = isCredentialRefusal(code)
      ? ` Check the ${this.role === 'MQTT publisher' ? 'publisher' : 'driver'}’s authentication settings and the broker’s ACL.`
      : '';
    const outage = this.outage;
    if (outage === undefined) {
      this.outage = { since: now, attempts: 1, logged: reason, loggedAt: now };
      this.options.log.error(
        { reasonCode: code },
        wasLive
          ? `${this.role} '${name}' lost the broker connection (${reason}); reconnecting.${hint}`
          : `${this.role} '${name}' cannot connect to the broker (${reason}); retrying.${hint}`,
      );
      return;
    }
    outage.attempts++;
    if (reason !== outage.logged || now - outage.loggedAt >= outageSummaryIntervalMs) {
      const what = reason !== outage.logged ? 'now' : 'still';
      outage.logged = reason;
      outage.loggedAt = now;
      this.options.log.warn(
        { reasonCode: code, attempts: outage.attempts, since: iso(outage.since) },
        `${this.role} '${name}' ${what} cannot connect to the broker (${reason}): ` +
          `${outage.attempts} failed attempts since ${iso(outage.since)}.${hint}`,
      );
    } else {
      this.options.log.debug(`MQTT connection attempt failed (${reason}).`);
    }
  }
}

/** True while the client has messages waiting for their acknowledgement. */
function hasOutgoing(client: MqttClient): boolean {
  return Object.keys(client.outgoing).length > 0;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
