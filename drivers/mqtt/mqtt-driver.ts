/**
 * The generic MQTT subscriber: subscribes to topic filters and turns each message into a sample
 * of the tag its topic maps to. A topic without wildcards is one tag, declared at start; a
 * filter with wildcards creates a tag per topic as messages arrive, up to `maxTags`. One tag is
 * fed by one topic only. Losing the broker turns every tag Unavailable at once; a tag becomes
 * Good again only with a message received on the new connection. A silent topic turns Stale
 * after `staleAfterMs` (the store's sweep); a payload that cannot be read turns its tag Bad.
 * A retained message (the broker's last value, handed over at subscription) is of unknown age
 * unless its payload has a timestamp: without one it is written Stale, never Good, until a live
 * message arrives; with one it is judged by it, as any message.
 */
import { hostname } from 'node:os';
import { rootCertificates } from 'node:tls';
import { connect, type IClientOptions, type ISubscriptionMap, type MqttClient } from 'mqtt';
import {
  describeBrokerError,
  isCredentialRefusal,
} from '../../src/publishers/mqtt/broker-errors.js';
import { readBrokerFiles } from '../../src/publishers/mqtt/broker-files.js';
import type { Sample, SampleMetadata } from '../../src/tags/sample.js';
import { tagPathProblem } from '../../src/tags/tag-path.js';
import type { TagDefinition } from '../../src/tags/tag-store.js';
import { ConnectionLifecycle } from '../connection-lifecycle.js';
import {
  type Driver,
  type DriverDeps,
  type DriverStatus,
  driverTagId,
  type WritableTag,
  type WriteRequest,
  type WriteResult,
} from '../driver.js';
import { unavailableSample } from '../unavailable-sample.js';
import {
  type PayloadErrorKind,
  type PayloadReader,
  payloadErrorKinds,
  payloadReader,
} from './payload-reader.js';
import { RateLimitedLog } from './rate-limited-log.js';
import type { MqttDriverConfig, MqttSubscriptionConfig } from './schema.js';
import {
  fillTagTemplate,
  matchTopic,
  parseTagTemplate,
  parseTopicFilter,
  type TagTemplate,
  type TopicFilter,
} from './topic-filter.js';
import { writePayload } from './write-payload.js';

/** Time the broker has to accept a connection (CONNACK), ms. */
export const connectTimeoutMs = 10_000;
/** Longest a stop waits for the client to close, ms (a broker that stopped answering). */
const stopGraceMs = 5_000;
/** Longest topic quoted in a log line, characters. */
const maxLoggedTopic = 200;

/** The running totals an MQTT driver reports in its status `counters`. */
export interface MqttCounters {
  /** Messages received on every subscription. */
  messagesReceived: number;
  /** Messages whose topic no subscription maps (an overlapping broker subscription). */
  messagesUnmatched: number;
  /** Retained messages ignored by a subscription with `acceptRetained: false`. */
  retainedIgnored: number;
  /** Retained messages without a timestamp, written Stale (their age is unknown). */
  retainedUnknownAge: number;
  /** Payloads that could not be read (sum of the kinds below); the tag turned Bad. */
  malformed: number;
  payloadTooLarge: number;
  payloadNotText: number;
  payloadNotJson: number;
  valueMissing: number;
  valueWrongType: number;
  timestampInvalid: number;
  qualityInvalid: number;
  /** Messages dropped because a new tag would exceed `maxTags`. */
  tagsRefused: number;
  /** Messages dropped because their topic makes no valid tag path. */
  topicsRefused: number;
  /** Messages dropped because their tag is already fed by another topic. */
  topicConflicts: number;
  /** Subscriptions the broker refused (SUBACK failure). */
  subscriptionsRefused: number;
  /** Connections lost after being established. */
  disconnects: number;
  /** Connection attempts that failed (refused, unreachable, timed out). */
  failedAttempts: number;
  /** Writes published and acknowledged by the broker. */
  writes: number;
}

/** One subscription, prepared. */
interface Subscription {
  index: number;
  config: MqttSubscriptionConfig;
  filter: TopicFilter;
  template: TagTemplate;
  reader: PayloadReader;
  qos: 0 | 1 | 2;
  /** Undefined: never Stale. */
  staleAfterMs: number | undefined;
}

/** One tag and the topic that feeds it. */
interface TagEntry {
  fullTagId: string;
  topic: string;
  subscription: Subscription;
  metadata: SampleMetadata;
}

/** An MQTT broker read through topic subscriptions. */
export class MqttDriver implements Driver {
  readonly type = 'mqtt';
  readonly name: string;
  private readonly counters: MqttCounters = {
    messagesReceived: 0,
    messagesUnmatched: 0,
    retainedIgnored: 0,
    retainedUnknownAge: 0,
    malformed: 0,
    payloadTooLarge: 0,
    payloadNotText: 0,
    payloadNotJson: 0,
    valueMissing: 0,
    valueWrongType: 0,
    timestampInvalid: 0,
    qualityInvalid: 0,
    tagsRefused: 0,
    topicsRefused: 0,
    topicConflicts: 0,
    subscriptionsRefused: 0,
    disconnects: 0,
    failedAttempts: 0,
    writes: 0,
  };
  private readonly lifecycle: ConnectionLifecycle;
  private readonly log: RateLimitedLog;
  private readonly subscriptions: Subscription[];
  /** Every tag, by fullTagId. */
  private readonly tags = new Map<string, TagEntry>();
  /** Every tag, by the topic that feeds it. */
  private readonly byTopic = new Map<string, TagEntry>();
  /** The writable tags, by fullTagId. */
  private readonly writeTargets = new Map<string, TagEntry>();
  /** The client of the current attempt or connection. */
  private client: MqttClient | undefined;
  /** The client once the broker accepted it and the subscriptions are made. */
  private live: MqttClient | undefined;
  private options: IClientOptions | undefined;
  private lastError: { text: string; code?: number } | undefined;

  constructor(
    private readonly config: MqttDriverConfig,
    private readonly deps: DriverDeps,
  ) {
    this.name = config.name;
    this.lifecycle = new ConnectionLifecycle('MQTT', deps, config, {
      counters: () => ({ ...this.counters }),
      writeUnavailable: (message) => this.writeUnavailable(message),
    });
    this.log = new RateLimitedLog(deps.logger, deps.clock);
    this.subscriptions = config.subscriptions.map((subscription, index) => {
      const staleAfterMs = subscription.staleAfterMs ?? config.staleAfterMs;
      return {
        index,
        config: subscription,
        filter: parseTopicFilter(subscription.topic),
        template: parseTagTemplate(subscription.tag),
        reader: payloadReader(subscription, config.maxPayloadBytes),
        qos: subscription.qos ?? config.qos,
        staleAfterMs: staleAfterMs === 0 ? undefined : staleAfterMs,
      };
    });
  }

  /**
   * Reads the TLS files, declares the tags of the topics without wildcards and starts
   * connecting (resolves before the connection is made).
   * @throws Error when a file the configuration names cannot be used.
   */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.begin());
  }

  stop(): Promise<void> {
    return this.lifecycle.stop(async () => {
      const client = this.client;
      this.client = undefined;
      this.live = undefined;
      if (client === undefined) return;
      await new Promise<void>((done) => {
        const timer = setTimeout(done, stopGraceMs);
        client.end(true, {}, () => {
          clearTimeout(timer);
          done();
        });
      });
    });
  }

  status(): DriverStatus {
    return this.lifecycle.status(this.tags.size);
  }

  writableTags(): readonly WritableTag[] {
    const allowWrites = this.config.allowWrites === true;
    return [...this.writeTargets.values()].map((entry) => {
      const { writeMin, writeMax, dataType } = entry.subscription.config;
      return {
        fullTagId: entry.fullTagId,
        ...(writeMin !== undefined ? { writeMin } : {}),
        ...(writeMax !== undefined ? { writeMax } : {}),
        allowWrites,
        check: (value) =>
          typeof value !== dataType
            ? `The tag takes a ${dataType}.`
            : typeof value === 'string' && value.length > 4096
              ? 'The text is longer than 4096 characters.'
              : undefined,
      };
    });
  }

  /**
   * Publishes each value on its tag's `writeTopic` (QoS 1, not retained). Good once the broker
   * acknowledged it: the tag itself changes only when the device publishes its new value.
   */
  async write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    const results: WriteResult[] = [];
    for (const request of requests) results.push(await this.writeOne(request));
    return results;
  }

  private async writeOne(request: WriteRequest): Promise<WriteResult> {
    const entry = this.writeTargets.get(request.fullTagId);
    const topic = entry?.subscription.config.writeTopic;
    if (entry === undefined || topic === undefined)
      return { status: 'Bad', reason: 'NotSupported', message: 'The tag has no writeTopic.' };
    const client = this.live;
    if (client === undefined)
      return {
        status: 'Bad',
        reason: 'Disconnected',
        message: 'The driver is not connected to the broker; nothing was published.',
      };
    const payload = writePayload(entry.subscription.config, entry.fullTagId, request, () =>
      new Date(this.deps.clock.now()).toISOString(),
    );
    try {
      await client.publishAsync(topic, payload, { qos: 1, retain: false });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'number')
        return {
          status: 'Bad',
          reason: 'DeviceException',
          message: `The broker refused the message: ${describeBrokerError(error, this.brokerUrl())}.`,
        };
      return {
        status: 'Uncertain',
        reason: 'OutcomeUnknown',
        message: 'The connection was lost before the broker acknowledged the message.',
      };
    }
    this.counters.writes++;
    return {
      status: 'Good',
      message: 'Published to the broker; the tag shows the new value once the device publishes it.',
    };
  }

  private brokerUrl(): URL {
    return new URL(this.config.brokerUrl);
  }

  private async begin(): Promise<void> {
    const { logger, store } = this.deps;
    if (!URL.canParse(this.config.brokerUrl)) {
      // Only the API's mask gets past the schema: a profile written with it by hand.
      const message = 'The broker URL is not set (it holds the mask of a secret).';
      this.lifecycle.setState('Error', message);
      throw new Error(message);
    }
    const files = await readBrokerFiles(this.config, this.deps.profileDir ?? process.cwd());
    if (files.problems.length > 0) {
      const fields = files.problems.map((problem) => problem.path).join(', ');
      this.lifecycle.setState('Error', `A file the driver names cannot be used: ${fields}.`);
      for (const problem of files.problems)
        logger.error({ field: problem.path }, `MQTT driver file problem: ${problem.message}`);
      throw new Error(`A file the MQTT driver names cannot be used: ${fields}.`);
    }
    const authentication = this.config.authentication;
    this.options = {
      clientId: this.config.clientId ?? `tagd-${hostname()}-mqtt-${this.name}`,
      protocolVersion: 5,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: connectTimeoutMs,
      keepalive: this.config.keepAliveSeconds,
      queueQoSZero: false,
      // The broker drops larger messages for this client instead of sending them: a topic
      // storm of huge payloads cannot fill the memory. A payload up to maxPayloadBytes fits.
      properties: { maximumPacketSize: this.config.maxPayloadBytes + 70_000 },
      ...(authentication.mode === 'Username password'
        ? { username: authentication.username, password: authentication.password }
        : {}),
      ...(files.extraCa !== undefined ? { ca: [...rootCertificates, files.extraCa] } : {}),
      ...(files.cert !== undefined ? { cert: files.cert } : {}),
      ...(files.key !== undefined ? { key: files.key } : {}),
      ...(authentication.mode === 'Client certificate' && authentication.keyPassphrase !== undefined
        ? { passphrase: authentication.keyPassphrase }
        : {}),
      // Certificate checks are never turned off, not even by NODE_TLS_REJECT_UNAUTHORIZED=0.
      rejectUnauthorized: true,
    };
    const definitions: TagDefinition[] = [];
    for (const subscription of this.subscriptions) {
      if (subscription.filter.wildcards > 0) continue;
      const entry = this.entry(subscription, subscription.filter.text, subscription.config.tag);
      this.add(entry);
      if (subscription.config.writeTopic !== undefined)
        this.writeTargets.set(entry.fullTagId, entry);
      definitions.push(this.definition(entry));
    }
    store.define(definitions);
    const run = this.lifecycle.started();
    logger.info(
      { subscriptions: this.subscriptions.length, declaredTags: definitions.length },
      'MQTT driver started',
    );
    this.lifecycle.detached(run, () => this.connect(run));
  }

  private entry(subscription: Subscription, topic: string, path: string): TagEntry {
    const { unit, description } = subscription.config;
    return {
      fullTagId: driverTagId(this.name, path),
      topic,
      subscription,
      metadata: {
        ...(unit !== undefined ? { unit } : {}),
        ...(description !== undefined ? { description } : {}),
        source: `mqtt:${topic}`,
      },
    };
  }

  private add(entry: TagEntry): void {
    this.tags.set(entry.fullTagId, entry);
    this.byTopic.set(entry.topic, entry);
  }

  private definition(entry: TagEntry): TagDefinition {
    const staleAfterMs = entry.subscription.staleAfterMs;
    return {
      fullTagId: entry.fullTagId,
      ...(staleAfterMs !== undefined ? { staleAfterMs } : {}),
      metadata: entry.metadata,
    };
  }

  private connect(run: number): void {
    const lifecycle = this.lifecycle;
    const options = this.options;
    if (options === undefined || !lifecycle.isCurrent(run)) return;
    lifecycle.attempt();
    this.lastError = undefined;
    let client: MqttClient;
    try {
      client = connect(this.config.brokerUrl, options);
    } catch (error) {
      // mqtt builds the TLS context inside connect(): OpenSSL refusing a file throws here.
      this.counters.failedAttempts++;
      this.retry(`the TLS set-up failed (${(error as Error).message})`, run);
      return;
    }
    this.client = client;
    const url = this.brokerUrl();
    client.on('error', (error) => {
      const code = (error as { code?: unknown }).code;
      this.lastError = {
        text: describeBrokerError(error, url),
        ...(typeof code === 'number' ? { code } : {}),
      };
    });
    client.on('connect', () => {
      if (this.client !== client || !lifecycle.isCurrent(run)) return;
      this.subscribe(client, run);
    });
    client.on('message', (topic, payload, packet) => {
      if (this.client !== client || !lifecycle.isCurrent(run)) return;
      this.receive(topic, payload, packet.retain);
    });
    client.on('close', () => {
      if (this.client !== client) return;
      this.client = undefined;
      const wasLive = this.live === client;
      this.live = undefined;
      client.end(true);
      if (!lifecycle.isCurrent(run)) return;
      const reason =
        this.lastError?.text ??
        (wasLive ? 'the broker closed the connection' : 'the connection could not be made');
      if (wasLive) {
        this.counters.disconnects++;
        lifecycle.resetAttempts();
        this.deps.logger.warn(`MQTT broker connection lost (${reason}); reconnecting`);
      } else this.counters.failedAttempts++;
      const hint = isCredentialRefusal(this.lastError?.code)
        ? ' Check the driver’s authentication settings and the broker’s ACL.'
        : '';
      this.retry(`${reason}.${hint}`, run);
    });
  }

  /** Every tag Unavailable at once, then a new attempt after the backoff. */
  private retry(message: string, run: number): void {
    this.lifecycle.markUnavailable(`The broker connection is lost: ${message}`);
    this.lifecycle.retryLater(message, () => this.connect(run));
  }

  private subscribe(client: MqttClient, run: number): void {
    const map: ISubscriptionMap = {};
    for (const subscription of this.subscriptions) {
      const text = subscription.filter.text;
      const qos = Math.max(map[text]?.qos ?? 0, subscription.qos) as 0 | 1 | 2;
      map[text] = { qos };
    }
    client.subscribe(map, (error, granted) => {
      if (this.client !== client || !this.lifecycle.isCurrent(run)) return;
      if (error) {
        // Not subscribed: the connection is of no use; closing it retries on the backoff.
        this.lastError = { text: `the subscription failed (${error.message})` };
        client.end(true);
        return;
      }
      const refused = (granted ?? []).filter((grant) => grant.qos >= 128);
      this.counters.subscriptionsRefused += refused.length;
      for (const grant of refused) {
        this.deps.logger.error(
          { topic: grant.topic.slice(0, maxLoggedTopic), reasonCode: grant.qos },
          `The broker refused the subscription to ${grant.topic.slice(0, maxLoggedTopic)} (${describeBrokerError({ code: grant.qos }, this.brokerUrl())})`,
        );
      }
      this.live = client;
      const { logger } = this.deps;
      if (this.lifecycle.attempts > 1)
        logger.info({ attempts: this.lifecycle.attempts }, 'MQTT broker connected again');
      else logger.info('MQTT broker connected');
      this.lifecycle.resetBackoff();
      this.lifecycle.setState(
        'Running',
        refused.length > 0
          ? `The broker refused ${refused.length} subscription(s): ${refused.map((grant) => grant.topic.slice(0, maxLoggedTopic)).join(', ')}.`
          : undefined,
      );
    });
  }

  private receive(topic: string, payload: Buffer, retained: boolean): void {
    const counters = this.counters;
    counters.messagesReceived++;
    let entry = this.byTopic.get(topic);
    let subscription = entry?.subscription;
    let captures: string[] | undefined;
    if (subscription === undefined) {
      for (const candidate of this.subscriptions) {
        captures = matchTopic(candidate.filter, topic);
        if (captures !== undefined) {
          subscription = candidate;
          break;
        }
      }
      if (subscription === undefined) {
        counters.messagesUnmatched++;
        return;
      }
    }
    if (retained && !subscription.config.acceptRetained) {
      counters.retainedIgnored++;
      return;
    }
    let created = false;
    if (entry === undefined) {
      entry = this.create(subscription, topic, captures ?? []);
      if (entry === undefined) return;
      created = true;
    }
    const sample = this.sample(entry, payload, retained);
    this.lifecycle.markAvailable();
    // Written first, then defined: the new tag's first sample is this one, not a placeholder.
    this.deps.store.write([sample]);
    if (created) this.deps.store.define([this.definition(entry)]);
  }

  /** A tag for a topic a wildcard matched, or undefined when it cannot be made. */
  private create(
    subscription: Subscription,
    topic: string,
    captures: string[],
  ): TagEntry | undefined {
    const counters = this.counters;
    const quoted = topic.slice(0, maxLoggedTopic);
    const path = fillTagTemplate(subscription.template, captures);
    const fullTagId = driverTagId(this.name, path);
    const problem = tagPathProblem(fullTagId);
    if (problem !== undefined) {
      counters.topicsRefused++;
      this.log.warn(
        'topicRefused',
        { topic: quoted },
        `MQTT topic ${quoted} makes no valid tag path (${problem}); its messages are dropped and counted (topicsRefused)`,
      );
      return undefined;
    }
    if (this.tags.has(fullTagId)) {
      counters.topicConflicts++;
      this.log.warn(
        'topicConflict',
        { topic: quoted, fullTagId },
        `MQTT topic ${quoted} maps to ${fullTagId}, which another topic feeds; its messages are dropped and counted (topicConflicts)`,
      );
      return undefined;
    }
    if (this.tags.size >= this.config.maxTags) {
      counters.tagsRefused++;
      this.log.warn(
        'tagsRefused',
        { topic: quoted, maxTags: this.config.maxTags },
        `MQTT driver holds maxTags (${this.config.maxTags}) tags; messages of new topics such as ${quoted} are dropped and counted (tagsRefused)`,
      );
      return undefined;
    }
    const entry = this.entry(subscription, topic, path);
    this.add(entry);
    return entry;
  }

  /** @param retained the broker's retained message, handed over at subscription. */
  private sample(entry: TagEntry, payload: Buffer, retained: boolean): Sample {
    const now = this.deps.clock.now();
    const reading = entry.subscription.reader.read(payload);
    const base = { fullTagId: entry.fullTagId, metadata: entry.metadata };
    if (!reading.ok) {
      this.payloadError(reading.kind, entry);
      return {
        ...base,
        utcTimestamp: new Date(now).toISOString(),
        quality: 'Bad',
        reason: 'DecodeError',
        message: reading.message,
      };
    }
    const utcTimestamp = new Date(reading.timestampMs ?? now).toISOString();
    const metadata =
      reading.valueText !== undefined
        ? { ...entry.metadata, valueText: reading.valueText }
        : entry.metadata;
    // The value as sent, but not Good: the publisher said so, or it is (or may be) old.
    const stale = (message: string): Sample => ({
      ...base,
      metadata,
      utcTimestamp,
      quality: 'Stale',
      value: reading.value as Sample['value'],
      reason: 'NoUpdate',
      message,
    });
    switch (reading.quality) {
      case 'Unavailable':
        return {
          ...base,
          utcTimestamp,
          quality: 'Unavailable',
          reason: 'Disconnected',
          message: 'The publisher reports the tag Unavailable.',
        };
      case 'Bad':
        return {
          ...base,
          utcTimestamp,
          quality: 'Bad',
          reason: 'DeviceException',
          message: 'The publisher reports the tag Bad.',
        };
      case 'Stale':
        return stale('The publisher reports the value Stale (Uncertain).');
      default: {
        if (retained && reading.timestampMs === undefined) {
          // The broker may have kept it for days, its publisher long dead: a value of unknown
          // age is never Good. The next live message (retained or not) makes it Good.
          this.counters.retainedUnknownAge++;
          return stale(
            'Retained value of unknown age: the broker kept it and the payload has no timestamp; Good again with the next live message.',
          );
        }
        const bound = entry.subscription.staleAfterMs;
        const age = reading.timestampMs !== undefined ? now - reading.timestampMs : 0;
        if (bound !== undefined && age > bound) {
          // A retained or long-queued message: the value is real but old.
          return stale(`The message is ${age} ms old, older than staleAfterMs (${bound} ms).`);
        }
        return {
          ...base,
          metadata,
          utcTimestamp,
          quality: 'Good',
          value: reading.value as Sample['value'],
        };
      }
    }
  }

  private payloadError(kind: PayloadErrorKind, entry: TagEntry): void {
    this.counters[kind]++;
    this.counters.malformed++;
    const topic = entry.topic.slice(0, maxLoggedTopic);
    this.log.warn(
      kind,
      { topic, fullTagId: entry.fullTagId },
      `MQTT payload on ${topic} cannot be read (${kind}): ${entry.fullTagId} is Bad; such payloads are counted (status counters.${kind})`,
    );
  }

  /** Writes every tag Unavailable (Disconnected); the lifecycle calls it once per outage. */
  private writeUnavailable(message: string): void {
    if (this.tags.size === 0) return;
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    const samples: Sample[] = [];
    for (const entry of this.tags.values())
      samples.push(unavailableSample(entry, utcTimestamp, message));
    this.deps.store.write(samples);
  }
}

/** Every payload error kind is a counter: checked at compile time against {@link MqttCounters}. */
export const payloadErrorCounters: readonly (keyof MqttCounters)[] = payloadErrorKinds;
