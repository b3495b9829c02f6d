/**
 * One MQTT publisher: keeps a connection to its broker and, every `updateIntervalMs` while
 * connected, selects a batch by its Logging mode (the webhook's selectors), turns it into
 * messages of its format and publishes them at its QoS, one batch in flight at a time. It keeps
 * its status, last delivery, counters and health tags.
 *
 * The json formats keep what cannot be delivered in the durable outbox (`src/outbox/`): while
 * the broker is unreachable each batch is appended there, and so are the messages of a batch the
 * broker did not acknowledge; once connected the outbox is delivered in order, a message removed
 * only after its PUBACK (QoS 1), before any new batch. Delivery is at least once.
 *
 * Sparkplug B without a `primaryHostId` does not use the outbox (a host application discards
 * DDATA of an older session): while the broker is unreachable nothing is selected, and the births
 * of the next connection carry every current value; On Change then continues from there.
 *
 * Sparkplug B with a `primaryHostId` stores and forwards (docs/sparkplug-store-and-forward.md):
 * it follows the host's STATE; while the host is offline, the broker unreachable or stored data
 * still waits, each batch's samples go to the outbox (`stored-samples.ts`). Once the host is
 * online on a connection: the pending changes are stored, NBIRTH and DBIRTHs go out, then the
 * stored samples in order as historical DDATA (a window at a time, removed once acknowledged),
 * then live data. The host going offline ends the session (DDEATHs, NDEATH, disconnect) and a
 * new one waits for it. With `acceptWrites`, DCMDs write through the tag writer
 * (`sparkplug-commands.ts`).
 *
 * With `alarms`, the transitions of the alarms the filter takes go out as they happen: json
 * formats one message per transition on `<topicPrefix>/alarms/<name>` (through the outbox, so
 * in order and at least once, at the publisher's QoS and retain); Sparkplug B as node metrics
 * (sparkplug-payloads.ts) in an NDATA, and in every NBIRTH.
 */
import { join } from 'node:path';
import type { MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import { type AlarmFeed, alarmFilterTakes, transitionDocument } from '../../alarms/alarm-filter.js';
import type { AlarmTransition } from '../../alarms/alarm-state.js';
import type { Clock, TimerHandle } from '../../clock.js';
import type { Outbox, OutboxMessage } from '../../outbox/outbox.js';
import type { Collections } from '../../tags/collections.js';
import type { Sample } from '../../tags/sample.js';
import type { TagStore } from '../../tags/tag-store.js';
import { deliveryHealthDefinitions, deliveryHealthTagIds } from '../delivery-health.js';
import {
  type DeliveryRecord,
  type PublisherCounters,
  type PublisherMetrics,
  type PublisherQueue,
  type PublisherState,
  type PublisherStatus,
  zeroCounters,
} from '../publisher.js';
import { openPublisherOutbox, outboxUnusableReason } from '../publisher-outbox.js';
import { DropWarnings } from '../trigger/drop-warnings.js';
import { type BatchSelector, createSelector } from '../trigger/selection.js';
import { BrokerConnection, type BrokerTlsAndAuth } from './broker-connection.js';
import { describeBrokerError } from './broker-errors.js';
import { readBrokerAuth } from './broker-files.js';
import { collectionMessages, type OutgoingMessage, tagMessages } from './json-messages.js';
import { PrimaryHostState } from './primary-host-state.js';
import { clientIdOf, type MqttConfig, retainOf, topicPrefixOf } from './schema.js';
import { type CommandWriter, SparkplugCommands } from './sparkplug-commands.js';
import type { AlarmNodeState } from './sparkplug-payloads.js';
import { SparkplugPublishing } from './sparkplug-publishing.js';
import { type StoredSample, storedEntries, storedSamplesOf } from './stored-samples.js';

/** Dependencies of an {@link MqttPublisher}. */
export interface MqttPublisherDeps {
  /** Where members are read and health tags written. */
  store: TagStore;
  /** The collections members come from, re-read every tick. */
  collections: Collections;
  /** Runs the interval and the reconnection waits. */
  clock: Clock;
  /** The daemon's logger; the publisher logs through a child naming it. */
  logger: Logger;
  /** Folder relative file names are resolved against (the profile's). Default: the working directory. */
  baseDir?: string;
  /** The state directory: Sparkplug keeps its bdSeq there. */
  stateDir: string;
  /** Delivery durations for the metrics. Default: not measured. */
  metrics?: PublisherMetrics;
  /** The running alarms, for a publisher with `alarms`. Absent: no alarm events are sent. */
  alarms?: AlarmFeed;
  /** Sparkplug DCMD writes go through it (with `acceptWrites`). Default: none, all refused. */
  writer?: CommandWriter;
}

/** Fixed text of the LastDeliveryError health tag after a failed delivery. */
export const mqttDeliveryFailedMessage = 'MQTT delivery failed - see log for details.';

/** The reason a publisher gives (Error, not running) when a file it names cannot be used; the log says why. */
export const filesUnusableReason =
  'A file of the publisher (caFile, client certificate or key) could not be used; the gateway log says why.';

/** What the management API shows of an MQTT publisher. */
export interface MqttPublisherState extends PublisherState {
  /** True while connected to the broker. */
  connected: boolean;
  /** Messages published and acknowledged (QoS 1) or written (QoS 0). */
  messages: number;
  /** Messages waiting for the broker's acknowledgement. */
  queueDepth: number;
  /** Age of the oldest of them, whole seconds; 0 when none waits. */
  oldestQueuedAgeSeconds: number;
  /** Sparkplug B, while running: write commands, and store-and-forward with a primaryHostId. */
  sparkplug?: SparkplugState;
}

/** Write commands (and, with a primaryHostId, store-and-forward) of a running Sparkplug publisher. */
export interface SparkplugState {
  /** DCMD metrics written through the tag writer since started. */
  commandsWritten: number;
  /** Write command metrics refused since started. */
  commandsRefused: number;
  /** With a primaryHostId: the primary host's latest STATE said online. */
  primaryHostOnline?: boolean;
  /**
   * With a primaryHostId: since when the host is online or offline as far as this publisher
   * knows (ISO 8601): the STATE that changed it, or the publisher's start (no STATE yet is offline).
   */
  primaryHostSince?: string;
  /** With a primaryHostId: samples stored in the outbox, waiting to be forwarded. */
  storedSamples?: number;
  /** With a primaryHostId: stored samples dropped (the oldest first) from a full outbox, since started. */
  droppedSamples?: number;
  /** With a primaryHostId: stored samples forwarded as historical data since started. */
  forwardedSamples?: number;
  /** With a primaryHostId: true while stored samples are being forwarded after the births. */
  catchingUp?: boolean;
}

/** The ids of an MQTT publisher's health tags. */
export function mqttHealthTagIds(name: string) {
  const base = `Publishers/${name}`;
  return {
    ...deliveryHealthTagIds(name),
    queueDepth: `${base}/QueueDepth`,
    oldestQueuedAgeSeconds: `${base}/OldestQueuedAgeSeconds`,
    /** Sparkplug with a primaryHostId: samples in the outbox. */
    storedSamples: `${base}/StoredSamples`,
    /** Sparkplug with a primaryHostId: true while stored samples are forwarded. */
    catchingUp: `${base}/CatchingUp`,
    /** Sparkplug with a primaryHostId: the primary host's STATE. */
    primaryHostOnline: `${base}/PrimaryHostOnline`,
  };
}

/** Most outbox messages read for one forwarding window. */
export const forwardRows = 1_000;
/** Most stored samples forwarded in one window (then acknowledged and removed together). */
export const forwardSamples = 20_000;

/** Messages read from the outbox and published at a time. */
export const outboxChunk = 1_000;

/** The reason an Off publisher gives after Stop. */
export const stoppedReason = 'stopped';

/**
 * An MQTT publisher. The manager checks the run conditions (license, collections) and calls
 * {@link start}. Counters and the last delivery survive stop, start and reconfiguration.
 */
export class MqttPublisher {
  private current: MqttConfig;
  private status: PublisherStatus = 'Off';
  private reason: string | undefined;
  private lastDelivery: DeliveryRecord | undefined;
  private readonly counters: PublisherCounters = zeroCounters();
  private messages = 0;
  private readonly log: Logger;
  private readonly health: ReturnType<typeof mqttHealthTagIds>;
  private readonly healthValues = new Map<string, string | number | boolean>();
  // Set while running.
  private timer: TimerHandle | undefined;
  private selector: BatchSelector | undefined;
  private connection: BrokerConnection | undefined;
  private sparkplug: SparkplugPublishing | undefined;
  private outbox: Outbox | undefined;
  /** Messages the outbox dropped during the current outage (logged once, totalled at its end). */
  private outboxDrops = 0;
  /** Set while the outbox fails (disk full, I/O error…): the reason shown, logged once. */
  private outboxFault: string | undefined;
  private inFlight: Promise<void> | undefined;
  private inFlightSince = 0;
  /** On Change or Everything: a tick came while a batch was in flight. */
  private tickMissed = false;
  private inFlightPending = 0;
  private members: string[] = [];
  private memberSet = new Set<string>();
  private memberOf: Map<string, string[]> | undefined;
  private stopMembersAdded: (() => void) | undefined;
  private stopTagsRemoved: (() => void) | undefined;
  private missingWarned = new Set<string>();
  private readonly dropWarnings: DropWarnings;
  private topicPrefix = '';
  private retain = false;
  private stopAlarms: (() => void) | undefined;
  /** json formats: alarm messages joined the outbox while a batch was in flight. */
  private alarmsWaiting = false;
  // Sparkplug store-and-forward, set while running with a primaryHostId.
  private storeAndForward = false;
  private hostState: PrimaryHostState | undefined;
  /**
   * When the primary host's state, as this publisher knows it, last changed (epoch ms): a
   * STATE turning it online or offline, or the start (no STATE yet counts as offline).
   */
  private hostSince = 0;
  /** The connection whose births went out (with a primaryHostId: only once the host is online). */
  private bornOn: MqttClient | undefined;
  private commands: SparkplugCommands | undefined;
  private catchUp: { since: number; forwarded: number; skipped: number } | undefined;
  private forwardedTotal = 0;
  private droppedStoredAtStart = 0;

  constructor(
    config: MqttConfig,
    private readonly deps: MqttPublisherDeps,
  ) {
    this.current = config;
    this.log = deps.logger.child({ component: 'mqtt', publisher: config.name });
    this.dropWarnings = new DropWarnings(this.counters, this.log);
    this.health = mqttHealthTagIds(config.name);
    deps.store.define([
      ...deliveryHealthDefinitions(this.health, 'MQTT', config.name),
      {
        fullTagId: this.health.queueDepth,
        metadata: { description: 'Messages waiting for the broker' },
      },
      {
        fullTagId: this.health.oldestQueuedAgeSeconds,
        metadata: { description: 'Age of the oldest message waiting for the broker', unit: 's' },
      },
    ]);
    this.writeHealth(this.health.status, 'Off');
    this.writeHealth(this.health.queueDepth, 0);
    this.writeHealth(this.health.oldestQueuedAgeSeconds, 0);
    if (config.format === 'sparkplugB' && config.primaryHostId !== undefined) {
      this.defineStoreAndForwardHealth();
    }
  }

  private defineStoreAndForwardHealth(): void {
    this.deps.store.define([
      {
        fullTagId: this.health.storedSamples,
        metadata: { description: 'Samples stored while the primary host or broker is away' },
      },
      {
        fullTagId: this.health.catchingUp,
        metadata: { description: 'true while stored samples are forwarded as historical data' },
      },
      {
        fullTagId: this.health.primaryHostOnline,
        metadata: { description: "The Sparkplug primary host's latest STATE" },
      },
    ]);
  }

  /** The publisher's name. */
  get name(): string {
    return this.current.name;
  }

  /** The configuration in force. */
  get config(): MqttConfig {
    return this.current;
  }

  /** True while On or Error (the timer runs). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Status, reason, last delivery, counters and queue, as the management API shows them. */
  state(): MqttPublisherState {
    return {
      name: this.current.name,
      status: this.status,
      ...(this.status !== 'On' && this.reason !== undefined ? { reason: this.reason } : {}),
      ...(this.lastDelivery ? { lastDelivery: { ...this.lastDelivery } } : {}),
      counters: { ...this.counters },
      connected: this.connection?.connected !== undefined,
      messages: this.messages,
      queueDepth: this.queueDepth(),
      oldestQueuedAgeSeconds: this.oldestAgeSeconds(),
      ...(this.commands !== undefined ? { sparkplug: this.sparkplugState() } : {}),
    };
  }

  private sparkplugState(): SparkplugState {
    const commands = {
      commandsWritten: this.commands?.counters.written ?? 0,
      commandsRefused: this.commands?.counters.refused ?? 0,
    };
    if (!this.storeAndForward) return commands;
    return {
      ...commands,
      primaryHostOnline: this.hostState?.online ?? false,
      primaryHostSince: new Date(this.hostSince).toISOString(),
      storedSamples: this.outbox?.samples ?? 0,
      droppedSamples: (this.outbox?.droppedSamples ?? 0) - this.droppedStoredAtStart,
      forwardedSamples: this.forwardedTotal,
      catchingUp: this.catchUp !== undefined,
    };
  }

  /**
   * Starts: reads the files the configuration names, connects (in the background, retried on a
   * capped backoff) and ticks every `updateIntervalMs`. A file that cannot be used (or an
   * outbox that cannot be opened) leaves the publisher not running, Error with that reason, so
   * monitoring flags it. Idempotent.
   */
  async start(): Promise<void> {
    if (this.running) return;
    const config = this.current;
    let auth: BrokerTlsAndAuth;
    try {
      auth = await readBrokerAuth(config, this.deps.baseDir ?? process.cwd());
    } catch (error) {
      // The reason is shown to every PublisherView account: it must not tell what a file holds.
      this.setError(filesUnusableReason);
      this.log.error(`MQTT publisher '${this.name}' cannot start: ${(error as Error).message}`);
      return;
    }
    if (this.running) return;
    // The json formats keep what the broker has not acknowledged on disk; Sparkplug only with a
    // primary host to store for.
    this.storeAndForward = config.format === 'sparkplugB' && config.primaryHostId !== undefined;
    if (config.format !== 'sparkplugB' || this.storeAndForward) {
      const outbox = openPublisherOutbox(
        {
          file: this.outboxFile,
          limitBytes: config.bufferLimitMB * 1024 * 1024,
          now: () => this.deps.clock.now(),
        },
        this.log,
        `MQTT publisher '${this.name}'`,
      );
      if (outbox === undefined) {
        this.setError(outboxUnusableReason);
        return;
      }
      this.outbox = outbox;
      this.droppedStoredAtStart = outbox.droppedSamples;
      if (outbox.depth > 0) {
        this.log.info(
          { queued: outbox.depth },
          `MQTT publisher '${this.name}' has ${outbox.depth} messages in its outbox from before; they go first.`,
        );
      }
    }
    this.topicPrefix = topicPrefixOf(config);
    this.retain = retainOf(config);
    this.refreshMembers();
    if (config.loggingMode === 'Everything') {
      this.stopMembersAdded = this.deps.collections.onMembersAdded((collection, ids) => {
        if (!this.current.collections.includes(collection)) return;
        for (const id of ids) {
          if (this.memberSet.has(id) || id.startsWith(`Publishers/${this.current.name}/`)) continue;
          this.memberSet.add(id);
          this.members.push(id);
        }
      });
    }
    this.stopTagsRemoved = this.deps.store.onTagsRemoved((ids) => this.tagsRemoved(ids));
    const sparkplug = config.format === 'sparkplugB';
    this.selector = createSelector(config.loggingMode, {
      store: this.deps.store,
      isMember: (id) => this.memberSet.has(id),
      counters: this.counters,
      everythingBufferSize: config.everythingBufferSize,
      ...(sparkplug ? { accepts: () => true } : {}),
    });
    this.selector.start();
    this.dropWarnings.restart();
    if (sparkplug) {
      this.sparkplug = new SparkplugPublishing(config, {
        clock: this.deps.clock,
        log: this.log,
        stateDir: this.deps.stateDir,
        currentSamples: () => this.currentSamples(),
        currentAlarms: () => this.currentAlarms(),
      });
      this.commands = new SparkplugCommands({
        writer: this.deps.writer,
        acceptWrites: config.acceptWrites,
        publisher: config.name,
        primaryHostId: config.primaryHostId,
        payloads: this.sparkplug.payloads,
        clock: this.deps.clock,
        log: this.log,
      });
      if (this.storeAndForward) {
        this.defineStoreAndForwardHealth();
        this.hostState = new PrimaryHostState();
        this.hostSince = this.deps.clock.now();
        this.writeHealth(this.health.primaryHostOnline, false);
        this.writeHealth(this.health.catchingUp, false);
      }
    }
    const connection = new BrokerConnection(
      {
        brokerUrl: config.brokerUrl,
        clientId: clientIdOf(config),
        auth,
        clock: this.deps.clock,
        log: this.log,
        name: config.name,
      },
      {
        ...(this.sparkplug
          ? { prepare: () => (this.sparkplug as SparkplugPublishing).prepare() }
          : {}),
        connected: (client) => this.onConnected(client),
        disconnected: (reason) => this.onDisconnected(reason),
      },
    );
    this.connection = connection;
    this.followAlarms();
    this.timer = this.deps.clock.setInterval(() => this.tick(), config.updateIntervalMs);
    // Error until the broker accepts: the publisher runs, but nothing is delivered yet.
    this.reason = 'connecting to the broker';
    this.setStatus('Error', false);
    connection.start();
    this.log.info(
      `MQTT publisher '${this.name}' started: ${config.format}, ${config.loggingMode} every ` +
        `${config.updateIntervalMs} ms at QoS ${config.qos}.`,
    );
  }

  /** Stops publishing and disconnects (Sparkplug: DDEATH and NDEATH first). Idempotent. */
  async stop(reason: string = stoppedReason): Promise<void> {
    if (this.running) {
      await this.teardown();
      this.log.info(`MQTT publisher '${this.name}' stopped (${reason}).`);
    }
    this.setOff(reason);
  }

  /** The file of this publisher's outbox. */
  get outboxFile(): string {
    return join(this.deps.stateDir, 'outbox', `mqtt-${this.current.name}.db`);
  }

  /** Records why a publisher that does not run is Off. */
  setOff(reason: string): void {
    this.reason = reason;
    this.setStatus('Off');
  }

  /** Records why a publisher that does not run could not start: status Error. */
  setError(reason: string): void {
    this.reason = reason;
    this.setStatus('Error', false);
  }

  /** Takes a new configuration (same name); a running publisher restarts with it. */
  async reconfigure(config: MqttConfig): Promise<void> {
    const wasRunning = this.running;
    if (wasRunning) await this.teardown();
    this.current = config;
    this.missingWarned.clear();
    if (wasRunning) await this.start();
  }

  /** Resolves when no batch is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  private async teardown(): Promise<void> {
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    this.tickMissed = false;
    this.alarmsWaiting = false;
    this.stopAlarms?.();
    this.stopAlarms = undefined;
    this.stopMembersAdded?.();
    this.stopMembersAdded = undefined;
    this.stopTagsRemoved?.();
    this.stopTagsRemoved = undefined;
    const sparkplug = this.sparkplug;
    await this.connection?.stop(
      sparkplug
        ? (client) =>
            sparkplug.farewell(
              client,
              this.current.qos,
              !this.storeAndForward || this.bornOn === client,
            )
        : undefined,
    );
    await this.idle();
    // Store-and-forward: the changes since the last tick are kept for the next start (a reload
    // or a restart), not lost with the selector.
    const selector = this.selector;
    if (this.storeAndForward && selector !== undefined && this.outbox !== undefined) {
      const pending = selector.select(this.members);
      if (pending.length > 0) this.store(pending);
      selector.delivered();
    }
    selector?.stop();
    this.selector = undefined;
    this.connection = undefined;
    this.sparkplug = undefined;
    this.bornOn = undefined;
    this.hostState = undefined;
    this.catchUp = undefined;
    this.commands = undefined;
    if (this.storeAndForward) this.writeHealth(this.health.catchingUp, false);
    this.updateQueueHealth();
    const outbox = this.outbox;
    if (outbox !== undefined) this.guarded(() => outbox.close(), false);
    this.outbox = undefined;
    this.outboxFault = undefined;
  }

  /**
   * Runs an outbox operation. better-sqlite3 throws synchronously (SQLITE_FULL, SQLITE_IOERR,
   * SQLITE_READONLY…), and these operations run in timers and mqtt.js callbacks, where a throw
   * would end the daemon (and systemd would restart it into the same full disk): the failure
   * is logged once per outage instead and the publisher is Error with the reason.
   * @param write a successful write ends an outage (a read may work while writes still fail).
   * @returns the operation's result, or undefined when it failed.
   */
  private guarded<T>(operation: () => T, write: boolean): T | undefined {
    try {
      const result = operation();
      if (write && this.outboxFault !== undefined) {
        this.outboxFault = undefined;
        this.log.info(`MQTT publisher '${this.name}': the outbox can be written again.`);
      }
      return result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      const text = `the outbox could not be written: ${typeof code === 'string' ? `${code} ` : ''}(${(error as Error).message})`;
      if (this.outboxFault === undefined) {
        this.log.error(
          { err: error },
          `MQTT publisher '${this.name}': ${text}; messages that cannot be kept are lost.`,
        );
      }
      this.outboxFault = text;
      this.reason = text;
      this.writeHealth(this.health.lastDeliverySuccess, false);
      this.writeHealth(this.health.lastDeliveryError, mqttDeliveryFailedMessage);
      this.setStatus('Error', false);
      return undefined;
    }
  }

  private onConnected(client: MqttClient): void {
    const sparkplug = this.sparkplug;
    this.bornOn = undefined;
    if (sparkplug === undefined) {
      this.reason = undefined;
      this.setStatus('On');
      this.pump();
      return;
    }
    const handlers = {
      rebirth: () => this.rebirth(),
      deviceCommand: (topic: string, device: string, payload: Uint8Array) =>
        void this.commands?.deviceCommand(topic, device, payload),
      nodeCommand: (topic: string, metrics: number) => this.commands?.nodeCommand(topic, metrics),
      hostState: (state: { online: boolean; timestamp: number }) => this.onHostState(client, state),
    };
    if (this.storeAndForward) {
      // No births before the primary host is online: its retained STATE answers the subscription.
      this.reason = this.waitingReason();
      this.setStatus('Error', false);
      this.track(
        sparkplug
          .connected(client, this.current.qos, handlers)
          .catch((error) =>
            this.failed(describeBrokerError(error, new URL(this.current.brokerUrl))),
          ),
      );
      return;
    }
    this.reason = undefined;
    this.setStatus('On');
    // Births go out before any data of this connection: the first tick waits for them.
    const births = sparkplug
      .connected(client, this.current.qos, handlers)
      .then(() => {
        this.bornOn = client;
        this.selector?.select(this.members);
        this.selector?.delivered();
      })
      .catch((error) => this.failed(describeBrokerError(error, new URL(this.current.brokerUrl))));
    this.track(births);
  }

  private waitingReason(): string {
    return (
      `waiting for the Sparkplug primary host '${this.current.primaryHostId}' to be online ` +
      '(its STATE); data is stored meanwhile'
    );
  }

  /**
   * A STATE of the primary host. Online: births, then the stored data, then live data. Offline
   * after the births: the session ends as Sparkplug 3.0 asks (DDEATHs and NDEATH, then
   * DISCONNECT), and a new one waits for the host; data is stored meanwhile.
   */
  private onHostState(client: MqttClient, state: { online: boolean; timestamp: number }): void {
    const host = this.hostState;
    if (host === undefined) return;
    const wasOnline = host.online;
    const result = host.update(state);
    if (result === 'ignored') {
      this.log.debug({ timestamp: state.timestamp }, 'Stale Sparkplug STATE ignored.');
      return;
    }
    if ((result === 'online') !== wasOnline) this.hostSince = this.deps.clock.now();
    this.writeHealth(this.health.primaryHostOnline, result === 'online');
    const connection = this.connection;
    if (connection?.connected !== client) return;
    if (result === 'online') {
      if (this.bornOn === client) return;
      this.log.info(
        { storedSamples: this.outbox?.samples ?? 0 },
        `Sparkplug primary host '${this.current.primaryHostId}' is online: births, then the stored data.`,
      );
      this.birthAndForward(client);
      return;
    }
    this.reason = this.waitingReason();
    this.setStatus('Error', false);
    if (this.bornOn !== client) return;
    this.endSession(client);
  }

  /** The primary host went offline after this connection's births: Sparkplug 3.0's session end. */
  private endSession(client: MqttClient): void {
    const connection = this.connection;
    if (connection?.connected !== client) return;
    this.bornOn = undefined;
    this.log.warn(
      `Sparkplug primary host '${this.current.primaryHostId}' went offline: ending the session ` +
        '(NDEATH, disconnect) and storing data until it is back.',
    );
    const sparkplug = this.sparkplug as SparkplugPublishing;
    const previous = this.inFlight ?? Promise.resolve();
    this.track(
      previous.then(() => connection.restart((live) => sparkplug.farewell(live, this.current.qos))),
    );
  }

  /** Births on a connection whose primary host is online, then the stored data. */
  private birthAndForward(client: MqttClient): void {
    const sparkplug = this.sparkplug as SparkplugPublishing;
    const previous = this.inFlight ?? Promise.resolve();
    const births = previous
      .then(async () => {
        if (this.connection?.connected !== client || this.bornOn === client) return;
        // Changes selected since the last tick are older than the births: stored, so they follow
        // as historical data instead of being lost.
        const selector = this.selector;
        if (selector !== undefined) {
          this.refreshMembers();
          const pending = selector.select(this.members);
          if (pending.length > 0) this.store(pending);
          selector.delivered();
        }
        // The host went offline again before the births: they wait for its next online.
        if (this.hostState?.online !== true) return;
        await sparkplug.births(client, this.current.qos);
        this.bornOn = client;
        // ... or while they were being sent: the session ends at once.
        if (this.hostState?.online !== true) {
          this.endSession(client);
          return;
        }
        this.reason = undefined;
        this.setStatus('On');
      })
      .catch((error) => this.failed(describeBrokerError(error, new URL(this.current.brokerUrl))));
    void this.track(births).then(() => this.forward());
  }

  /** Stores samples in the outbox (store-and-forward). */
  private store(samples: readonly Sample[]): void {
    this.enqueue(storedEntries(samples));
    this.updateStoredHealth();
  }

  /**
   * Forwards the stored samples after the births: a window of up to {@link forwardSamples}
   * samples at a time as historical DDATA, removed once every payload of it was acknowledged;
   * the next window follows at once, until the outbox is empty, then live data resumes.
   */
  private forward(): void {
    const client = this.connection?.connected;
    const outbox = this.outbox;
    const sparkplug = this.sparkplug;
    if (client === undefined || outbox === undefined || sparkplug === undefined) return;
    if (this.bornOn !== client || this.inFlight !== undefined) return;
    if (outbox.depth === 0) {
      this.caughtUp();
      return;
    }
    const window = this.guarded(() => outbox.peekSamples(forwardSamples, forwardRows), false);
    if (window === undefined) return;
    const samples: StoredSample[] = [];
    let unreadable = 0;
    for (const row of window) {
      const stored = storedSamplesOf(row.topic, row.payload);
      if (stored === undefined) unreadable += row.samples;
      else for (const sample of stored) samples.push(sample);
    }
    if (unreadable > 0) {
      this.log.warn(
        { messages: unreadable },
        `MQTT publisher '${this.name}': outbox messages that are not stored Sparkplug samples ` +
          '(another format wrote them) are dropped.',
      );
    }
    const { messages, skipped } = sparkplug.historical(samples);
    if (this.catchUp === undefined) {
      this.catchUp = { since: this.deps.clock.now(), forwarded: 0, skipped: 0 };
      this.writeHealth(this.health.catchingUp, true);
      this.log.info(
        { storedSamples: outbox.samples },
        `MQTT publisher '${this.name}': forwarding ${outbox.samples} stored samples as historical data.`,
      );
    }
    const ids = window.map((row) => row.id);
    void this.track(this.forwardWindow(client, outbox, ids, messages, skipped + unreadable)).then(
      () => {
        if (this.outboxFault === undefined) this.forward();
      },
    );
  }

  private forwardWindow(
    client: MqttClient,
    outbox: Outbox,
    ids: number[],
    messages: OutgoingMessage[],
    skipped: number,
  ): Promise<void> {
    const clock = this.deps.clock;
    const startedAt = clock.now();
    const qos = this.current.qos;
    let samples = 0;
    for (const message of messages) samples += message.samples;
    return new Promise<void>((resolveForwarded) => {
      let pending = messages.length;
      let failure: unknown;
      let refused = 0;
      const done = () => {
        if (--pending > 0) return;
        const catchUp = this.catchUp;
        // Kept when the connection failed: the window goes again after the next births (at
        // least once; a repeated sample has the same timestamp).
        if (failure === undefined || refused > 0) {
          this.guarded(() => outbox.remove(ids), true);
          this.forwardedTotal += samples;
          this.counters.samples += samples;
          this.counters.batches++;
          this.messages += messages.length;
          if (catchUp !== undefined) {
            catchUp.forwarded += samples;
            catchUp.skipped += skipped;
          }
          if (skipped > 0 || refused > 0) this.counters.failures++;
        }
        this.reportDelivery(failure === undefined, clock.now() - startedAt);
        if (failure === undefined) {
          this.lastDelivery = {
            at: new Date(clock.now()).toISOString(),
            ok: true,
            attempts: 1,
            durationMs: clock.now() - startedAt,
            samples,
          };
          this.delivered();
        } else {
          this.failed(describeBrokerError(failure, new URL(this.current.brokerUrl)), refused > 0);
        }
        this.updateQueueHealth();
        resolveForwarded();
      };
      if (messages.length === 0) {
        pending = 1;
        done();
        return;
      }
      for (const message of messages) {
        client.publish(message.topic, message.payload, { qos }, (error) => {
          if (error) {
            failure ??= error;
            if (isRefusal(error)) refused++;
          }
          done();
        });
      }
    });
  }

  /** The outbox is empty after a catch-up: logged with its totals and rate. */
  private caughtUp(): void {
    const catchUp = this.catchUp;
    if (catchUp === undefined) return;
    this.catchUp = undefined;
    this.writeHealth(this.health.catchingUp, false);
    const seconds = Math.max(0.001, (this.deps.clock.now() - catchUp.since) / 1000);
    this.log.info(
      {
        forwarded: catchUp.forwarded,
        skipped: catchUp.skipped,
        dropped: this.outboxDrops,
        seconds,
        samplesPerSecond: Math.round(catchUp.forwarded / seconds),
      },
      `MQTT publisher '${this.name}': caught up, ${catchUp.forwarded} stored samples forwarded` +
        (this.outboxDrops > 0
          ? `; ${this.outboxDrops} outbox messages were dropped while full`
          : '') +
        (catchUp.skipped > 0
          ? `; ${catchUp.skipped} samples of tags no longer published skipped`
          : '') +
        '.',
    );
    this.outboxDrops = 0;
    this.updateQueueHealth();
  }

  private onDisconnected(reason: string): void {
    this.reason = reason;
    this.writeHealth(this.health.lastDeliverySuccess, false);
    this.writeHealth(this.health.lastDeliveryError, mqttDeliveryFailedMessage);
    this.setStatus('Error');
  }

  /**
   * Members removed from the store (their driver was removed or reconfigured). Consumers would
   * otherwise keep their last Good value: a retained json-per-tag topic is cleared with an
   * empty retained message (through the outbox when it holds earlier messages or no broker is
   * connected, so the order holds).
   */
  private tagsRemoved(ids: readonly string[]): void {
    const removed = ids.filter((id) => this.memberSet.has(id));
    if (removed.length === 0) return;
    // Not selected any more, even before the next tick re-reads the collections.
    for (const id of removed) this.memberSet.delete(id);
    this.members = this.members.filter((id) => this.memberSet.has(id));
    const sparkplug = this.sparkplug;
    if (sparkplug !== undefined) {
      this.sparkplugRemoved(sparkplug, removed);
      return;
    }
    if (this.current.format !== 'json-per-tag' || !this.retain) return;
    const clears: OutgoingMessage[] = removed.map((id) => ({
      topic: `${this.topicPrefix}/${id}`,
      payload: '',
      samples: 0,
    }));
    const client = this.connection?.connected;
    const outbox = this.outbox;
    if (outbox !== undefined && (client === undefined || outbox.depth > 0)) {
      this.enqueue(clears);
      this.pump();
      this.updateQueueHealth();
      return;
    }
    if (client === undefined) return;
    for (const message of clears) {
      client.publish(
        message.topic,
        message.payload,
        { qos: this.current.qos, retain: true },
        (error) => {
          if (error)
            this.log.debug({ err: error, topic: message.topic }, 'Retained topic not cleared.');
        },
      );
    }
  }

  /**
   * Sparkplug: DDEATH for each device left without members, new births when a remaining device
   * lost metrics. Not connected, nothing is sent: the next connection's births hold only what
   * exists.
   */
  private sparkplugRemoved(sparkplug: SparkplugPublishing, removed: readonly string[]): void {
    const { deaths, rebirth } = sparkplug.removed(removed);
    const client = this.connection?.connected;
    if (client === undefined) return;
    // Waiting for the primary host: nothing was born, the next births hold only what exists.
    if (this.storeAndForward && this.bornOn !== client) return;
    // Published at once: the client sends in call order, so after any batch in flight (whose
    // seq numbers came first).
    for (const message of deaths) {
      client.publish(message.topic, message.payload, { qos: this.current.qos }, (error) => {
        if (error) this.log.debug({ err: error, topic: message.topic }, 'DDEATH not sent.');
      });
    }
    if (rebirth) this.rebirth();
  }

  /** Sparkplug NCMD Rebirth, or a member the births did not announce. */
  private rebirth(): void {
    const client = this.connection?.connected;
    const sparkplug = this.sparkplug;
    if (client === undefined || sparkplug === undefined) return;
    // No births before the primary host is online (its STATE brings them).
    if (this.storeAndForward && this.bornOn !== client) return;
    const previous = this.inFlight ?? Promise.resolve();
    const births = previous
      .then(() => sparkplug.births(client, this.current.qos))
      .catch((error) => this.failed(describeBrokerError(error, new URL(this.current.brokerUrl))));
    this.track(births);
  }

  private track(flight: Promise<void>): Promise<void> {
    const tracked = flight.finally(() => {
      if (this.inFlight !== tracked) return;
      this.inFlight = undefined;
      // A change-driven tick that came while this was in flight runs now, not an interval later.
      if (this.tickMissed) {
        this.tickMissed = false;
        this.tick();
      }
      // Alarm messages that joined the outbox meanwhile go now, not at the next tick.
      if (this.alarmsWaiting && this.inFlight === undefined) {
        this.alarmsWaiting = false;
        if (this.outboxFault === undefined) this.pump();
      }
    });
    this.inFlight = tracked;
    return tracked;
  }

  private tick(): void {
    const selector = this.selector;
    if (selector === undefined) return;
    this.dropWarnings.tick(this.current.everythingBufferSize);
    this.updateQueueHealth();
    const client = this.connection?.connected;
    const outbox = this.outbox;
    if (client === undefined && outbox === undefined) return;
    if (this.inFlight !== undefined) {
      if (this.current.loggingMode === 'Snapshot') this.counters.skippedTicks++;
      else this.tickMissed = true;
      return;
    }
    this.refreshMembers();
    const samples = selector.select(this.members);
    if (this.storeAndForward) {
      this.storeOrPublish(selector, samples, client);
      return;
    }
    let messages: OutgoingMessage[];
    if (this.sparkplug !== undefined) {
      const data = this.sparkplug.data(samples);
      if (data === 'rebirth') {
        selector.dropped();
        this.rebirth();
        return;
      }
      messages = data;
    } else if (this.current.format === 'json-per-tag') {
      messages = tagMessages(samples, this.topicPrefix);
    } else {
      messages = collectionMessages(samples, this.topicPrefix, this.present(), this.memberOf);
    }
    if (messages.length === 0) {
      selector.delivered();
      return;
    }
    // A failing outbox is bypassed while connected: publishing goes on without it.
    const behind = outbox !== undefined && outbox.depth > 0 && this.outboxFault === undefined;
    if (outbox !== undefined && (client === undefined || behind)) {
      // Behind what waits already, or no broker: the batch is kept on disk, so it is the
      // outbox's now, and the selector moves on as if it had been delivered.
      this.enqueue(messages);
      selector.delivered();
      this.pump();
    } else if (client !== undefined) {
      this.track(this.publish(client, selector, messages));
    }
    this.updateQueueHealth();
  }

  /**
   * Sparkplug with a primary host: live DDATA when the births of this connection went out and
   * nothing stored waits; else the samples are stored (and forwarding goes on).
   */
  private storeOrPublish(
    selector: BatchSelector,
    samples: Sample[],
    client: MqttClient | undefined,
  ): void {
    const outbox = this.outbox as Outbox;
    const sparkplug = this.sparkplug as SparkplugPublishing;
    // A failing outbox is bypassed while live: publishing goes on without it.
    const live =
      client !== undefined &&
      this.bornOn === client &&
      (outbox.depth === 0 || this.outboxFault !== undefined);
    if (!live) {
      if (samples.length > 0) this.store(samples);
      selector.delivered();
      this.forward();
      this.updateQueueHealth();
      return;
    }
    if (this.catchUp !== undefined) this.caughtUp();
    const data = sparkplug.data(samples);
    if (data === 'rebirth') {
      // Kept, and sent as historical data after the new births.
      this.store(samples);
      selector.delivered();
      this.rebirth();
      return;
    }
    if (data.length === 0) {
      selector.delivered();
      return;
    }
    this.track(this.publish(client, selector, data, samples));
    this.updateQueueHealth();
  }

  /**
   * Appends messages to the outbox; drops are logged once per outage. When the outbox cannot be
   * written the messages are lost: counted as a failure, and the publisher shows why.
   */
  private enqueue(messages: readonly OutgoingMessage[]): void {
    const outbox = this.outbox as Outbox;
    const dropped = this.guarded(() => outbox.append(messages), true);
    if (dropped === undefined) {
      this.counters.failures++;
      return;
    }
    if (dropped === 0) return;
    if (this.outboxDrops === 0) {
      this.log.warn(
        { dropped, bufferLimitMB: this.current.bufferLimitMB },
        `MQTT publisher '${this.name}': the outbox is full (${this.current.bufferLimitMB} MB); ` +
          'the oldest messages are being dropped. The total is logged once the outbox drains.',
      );
    }
    this.outboxDrops += dropped;
  }

  /**
   * Delivers the outbox, oldest first, a chunk at a time, while connected and nothing else is
   * in flight; a message leaves the outbox once acknowledged.
   */
  private pump(): void {
    const client = this.connection?.connected;
    const outbox = this.outbox;
    if (client === undefined || outbox === undefined || this.inFlight !== undefined) return;
    if (outbox.depth === 0) {
      if (this.outboxDrops > 0) {
        this.log.warn(
          { dropped: this.outboxDrops },
          `MQTT publisher '${this.name}': the outbox is delivered; ${this.outboxDrops} of the ` +
            'oldest messages were dropped while it was full.',
        );
        this.outboxDrops = 0;
      }
      this.updateQueueHealth();
      return;
    }
    const chunk = this.guarded(() => outbox.peek(outboxChunk), false);
    if (chunk === undefined) return;
    // While the outbox fails, a chunk it could not remove would be sent again and again.
    void this.track(this.drain(client, outbox, chunk)).then(() => {
      if (this.outboxFault === undefined) this.pump();
    });
  }

  private drain(client: MqttClient, outbox: Outbox, chunk: OutboxMessage[]): Promise<void> {
    const clock = this.deps.clock;
    const startedAt = clock.now();
    const qos = this.current.qos;
    const retain = this.retain;
    return new Promise<void>((resolveDrained) => {
      let pending = chunk.length;
      let failure: unknown;
      const acked: number[] = [];
      const refused: number[] = [];
      const done = () => {
        if (--pending > 0) return;
        // A message the broker refused (a reason code: not authorized…) would be refused again:
        // it leaves the outbox with the delivered ones, counted as lost.
        // Not removed (the outbox fails): they are sent again later, at least once.
        this.guarded(() => outbox.remove([...acked, ...refused]), true);
        this.messages += acked.length;
        this.reportDelivery(failure === undefined, clock.now() - startedAt);
        if (failure === undefined) {
          this.lastDelivery = {
            at: new Date(clock.now()).toISOString(),
            ok: true,
            attempts: 1,
            durationMs: clock.now() - startedAt,
            samples: acked.length,
          };
          this.counters.batches++;
          this.delivered();
        } else {
          this.failed(
            describeBrokerError(failure, new URL(this.current.brokerUrl)),
            refused.length > 0,
          );
        }
        this.updateQueueHealth();
        resolveDrained();
      };
      for (const message of chunk) {
        client.publish(message.topic, message.payload, { qos, retain }, (error) => {
          if (error) failure ??= error;
          if (!error) acked.push(message.id);
          else if (isRefusal(error)) refused.push(message.id);
          done();
        });
      }
    });
  }

  private delivered(): void {
    this.writeHealth(this.health.lastDeliverySuccess, true);
    this.writeHealth(this.health.lastDeliveryError, '');
    // A failing outbox stays visible until a write succeeds again (or the publisher restarts).
    if (this.outboxFault !== undefined) return;
    if (this.status === 'Error') this.reason = undefined;
    this.setStatus('On');
  }

  /**
   * @param batch Sparkplug store-and-forward: the batch's samples, stored again when it was
   *   not wholly acknowledged (its DDATA belong to this session only).
   */
  private publish(
    client: MqttClient,
    selector: BatchSelector,
    messages: OutgoingMessage[],
    batch?: readonly Sample[],
  ): Promise<void> {
    const clock = this.deps.clock;
    const startedAt = clock.now();
    const qos = this.current.qos;
    const retain = this.retain;
    let samples = 0;
    for (const message of messages) samples += message.samples;
    this.inFlightSince = startedAt;
    this.inFlightPending = messages.length;
    const acked = new Set<OutgoingMessage>();
    const refused = new Set<OutgoingMessage>();
    return new Promise<void>((resolvePublished) => {
      let failure: unknown;
      const finish = () => {
        this.inFlightPending--;
        if (this.inFlightPending > 0) return;
        const unacked = messages.filter((message) => !acked.has(message) && !refused.has(message));
        const record: DeliveryRecord = {
          at: new Date(clock.now()).toISOString(),
          ok: failure === undefined,
          attempts: 1,
          durationMs: clock.now() - startedAt,
          samples,
        };
        this.reportDelivery(record.ok, record.durationMs);
        if (failure === undefined) {
          this.lastDelivery = record;
          this.counters.batches++;
          this.counters.samples += samples;
          this.messages += messages.length;
          selector.delivered();
          this.delivered();
        } else {
          const text = describeBrokerError(failure, new URL(this.current.brokerUrl));
          this.lastDelivery = { ...record, error: text };
          this.messages += messages.length - unacked.length;
          if (this.outbox !== undefined) {
            // Kept, in order, for the next connection; some may have arrived (at least once).
            if (batch !== undefined) this.store(batch);
            else this.enqueue(unacked);
            selector.delivered();
            this.failed(text, refused.size > 0);
          } else {
            selector.dropped();
            this.failed(text);
          }
        }
        this.updateQueueHealth();
        resolvePublished();
      };
      for (const message of messages) {
        client.publish(message.topic, message.payload, { qos, retain }, (error) => {
          if (error) failure ??= error;
          if (!error) acked.add(message);
          else if (isRefusal(error)) refused.add(message);
          finish();
        });
      }
    });
  }

  /**
   * A batch (or an outbox chunk) was not wholly delivered.
   * @param lost whether messages were given up (refused by the broker, or no outbox to keep
   *   them): counted in `failures`. Messages kept for a later attempt are not.
   */
  private failed(text: string, lost = true): void {
    if (lost) this.counters.failures++;
    this.reason = text;
    this.writeHealth(this.health.lastDeliverySuccess, false);
    this.writeHealth(this.health.lastDeliveryError, mqttDeliveryFailedMessage);
    if (this.status !== 'Error') {
      this.log.error(`MQTT publisher '${this.name}': a batch was not delivered (${text}).`);
    } else {
      this.log.debug(`MQTT batch not delivered (${text}).`);
    }
    this.setStatus('Error');
  }

  /** `alarms`: hears the alarm transitions while running and sends those the filter takes. */
  private followAlarms(): void {
    const filter = this.current.alarms;
    const feed = this.deps.alarms;
    if (filter === undefined || feed === undefined) return;
    this.stopAlarms = feed.subscribe((transitions) => {
      const taken = transitions.filter((transition) => alarmFilterTakes(filter, transition));
      if (taken.length === 0) return;
      if (this.sparkplug !== undefined) this.sparkplugAlarms(this.sparkplug, taken);
      else this.jsonAlarms(taken);
    });
  }

  /**
   * json formats: one message per transition, `<topicPrefix>/alarms/<name>`, payload the
   * transition's JSON, through the outbox (kept while the broker is away, in order).
   */
  private jsonAlarms(transitions: readonly (AlarmTransition & { seq?: number })[]): void {
    if (this.outbox === undefined) return;
    this.enqueue(
      transitions.map((transition) => ({
        topic: `${this.topicPrefix}/alarms/${transition.name}`,
        payload: JSON.stringify(transitionDocument(transition)),
        samples: 0,
      })),
    );
    if (this.inFlight !== undefined) this.alarmsWaiting = true;
    else this.pump();
    this.updateQueueHealth();
  }

  /**
   * Sparkplug B: an NDATA with each alarm's state after the batch, after whatever is in flight
   * (births reset `seq`). Not connected, nothing is sent: the next NBIRTH carries the states.
   */
  private sparkplugAlarms(
    sparkplug: SparkplugPublishing,
    transitions: readonly AlarmTransition[],
  ): void {
    const latest = new Map<string, AlarmNodeState>();
    for (const transition of transitions) {
      latest.set(transition.name, {
        name: transition.name,
        state: transition.to,
        active: transition.active,
        acknowledged: transition.acknowledged,
        time: transition.time,
      });
    }
    const states = [...latest.values()];
    if (this.connection?.connected === undefined) return;
    const previous = this.inFlight ?? Promise.resolve();
    const sent = previous.then(async () => {
      const client = this.connection?.connected;
      if (client === undefined || this.sparkplug !== sparkplug) return;
      const data = sparkplug.alarmData(states);
      if (data === 'rebirth') {
        await sparkplug.births(client, this.current.qos);
        return;
      }
      await client.publishAsync(data.topic, data.payload, { qos: this.current.qos });
      this.messages++;
    });
    this.track(
      sent.catch((error) =>
        this.failed(describeBrokerError(error, new URL(this.current.brokerUrl))),
      ),
    );
  }

  /** The alarms the filter takes, as Sparkplug node metrics (for the NBIRTH). */
  private currentAlarms(): AlarmNodeState[] {
    const filter = this.current.alarms;
    const feed = this.deps.alarms;
    if (filter === undefined || feed === undefined) return [];
    const now = this.deps.clock.now();
    return feed
      .list()
      .filter((alarm) => alarmFilterTakes(filter, alarm))
      .map((alarm) => ({
        name: alarm.name,
        state: alarm.state,
        active: alarm.active,
        acknowledged: alarm.acknowledged,
        time: alarm.changedAt !== undefined ? Date.parse(alarm.changedAt) : now,
      }));
  }

  /** Samples of every member now, for Sparkplug births. */
  private currentSamples(): Sample[] {
    this.refreshMembers();
    const samples: Sample[] = [];
    for (const id of this.members) {
      const sample = this.deps.store.get(id);
      if (sample !== undefined) samples.push(sample);
    }
    return samples;
  }

  /** What waits for the broker, and the outbox (metrics). */
  queue(): PublisherQueue {
    const oldestAge = this.oldestAgeSeconds();
    const outbox = this.outbox;
    return {
      name: this.current.name,
      depth: this.queueDepth(),
      ...(this.queueDepth() > 0
        ? { oldestQueuedAt: this.deps.clock.now() - oldestAge * 1000 }
        : {}),
      ...(outbox !== undefined
        ? {
            outbox: {
              messages: outbox.depth,
              bytes: outbox.sizeBytes,
              dropped: outbox.dropped,
              ...(this.storeAndForward
                ? { samples: outbox.samples, droppedSamples: outbox.droppedSamples }
                : {}),
            },
          }
        : {}),
      ...(this.commands !== undefined
        ? {
            sparkplug: {
              commandsWritten: this.commands.counters.written,
              commandsRefused: this.commands.counters.refused,
              ...(this.storeAndForward
                ? {
                    catchingUp: this.catchUp !== undefined,
                    primaryHostOnline: this.hostState?.online ?? false,
                  }
                : {}),
            },
          }
        : {}),
    };
  }

  private reportDelivery(ok: boolean, durationMs: number): void {
    this.deps.metrics?.deliveryEnded(
      this.current.name,
      ok ? 'success' : 'failure',
      durationMs / 1000,
    );
  }

  /** Messages not yet acknowledged: in the outbox, or of a batch in flight. */
  private queueDepth(): number {
    return (this.outbox?.depth ?? 0) + this.inFlightPending;
  }

  private oldestAgeSeconds(): number {
    let oldest = this.inFlightPending > 0 ? this.inFlightSince : undefined;
    const outbox = this.outbox;
    const queued = outbox?.depth ? this.guarded(() => outbox.oldestQueuedAt(), false) : undefined;
    if (queued !== undefined && (oldest === undefined || queued < oldest)) oldest = queued;
    if (oldest === undefined) return 0;
    return Math.max(0, Math.floor((this.deps.clock.now() - oldest) / 1000));
  }

  private updateQueueHealth(): void {
    this.writeHealth(this.health.queueDepth, this.queueDepth());
    this.writeHealth(this.health.oldestQueuedAgeSeconds, this.oldestAgeSeconds());
    this.updateStoredHealth();
  }

  private updateStoredHealth(): void {
    if (this.storeAndForward && this.outbox !== undefined) {
      this.writeHealth(this.health.storedSamples, this.outbox.samples);
    }
  }

  /** The configured collections that exist, in configuration order, without repeats. */
  private present(): string[] {
    const present: string[] = [];
    for (const name of this.current.collections) {
      if (this.deps.collections.has(name) && !present.includes(name)) present.push(name);
    }
    return present;
  }

  /** Re-reads the union of the collections' members, in collection order. */
  private refreshMembers(): void {
    const collections = this.deps.collections;
    for (const name of this.current.collections) {
      if (collections.has(name)) this.missingWarned.delete(name);
      else if (!this.missingWarned.has(name)) {
        this.missingWarned.add(name);
        this.log.warn(
          `Collection '${name}' of MQTT publisher '${this.name}' no longer exists; ` +
            'its tags are not published.',
        );
      }
    }
    const present = this.present();
    const members: string[] = [];
    const seen = new Set<string>();
    const byCollection = this.current.format === 'json' && present.length > 1;
    const memberOf = byCollection ? new Map<string, string[]>() : undefined;
    // Its own health tags change with every publish (QueueDepth): publishing them would feed
    // itself, a batch every tick. Other publishers' health tags are published as any tag.
    const own = `Publishers/${this.current.name}/`;
    for (const name of present) {
      for (const id of collections.members(name)) {
        if (id.startsWith(own)) continue;
        if (memberOf !== undefined) {
          const list = memberOf.get(id);
          if (list === undefined) memberOf.set(id, [name]);
          else list.push(name);
        }
        if (seen.has(id)) continue;
        seen.add(id);
        members.push(id);
      }
    }
    this.members = members;
    this.memberSet = seen;
    this.memberOf = memberOf;
  }

  private setStatus(status: PublisherStatus, clearReason = true): void {
    if (status === 'On' && clearReason) this.reason = undefined;
    if (this.status === status) return;
    this.status = status;
    this.writeHealth(this.health.status, status);
  }

  /** Writes a health tag when its value changed (a 10 ms publisher must not flood the store). */
  private writeHealth(fullTagId: string, value: string | number | boolean): void {
    if (this.healthValues.get(fullTagId) === value) return;
    this.healthValues.set(fullTagId, value);
    this.deps.store.write([
      {
        fullTagId,
        utcTimestamp: new Date(this.deps.clock.now()).toISOString(),
        quality: 'Good',
        value,
      },
    ]);
  }
}

/** True for an error carrying an MQTT reason code: the broker refused the message itself. */
function isRefusal(error: unknown): boolean {
  return typeof (error as { code?: unknown }).code === 'number';
}
