/**
 * The Sparkplug B host application (README: docs/relay.md): one broker connection, as a
 * Primary Host, relaying the metrics of the edge nodes it follows as tags.
 *
 * - Primary Host STATE (Sparkplug 3.0): after subscribing (to the groups and to its own STATE
 *   topic), `spBv1.0/STATE/<hostId>` is published retained at QoS 1 as
 *   `{"online":true,"timestamp":t}`, with `{"online":false,"timestamp":t}` (the same t) as the
 *   connection's Will and as the first message of a clean stop. An offline STATE of its own id delivered while online (the late Will of
 *   an earlier connection) is answered by publishing the online STATE again.
 * - A clean stop drains (docs/relay.md, "Stopping the host"): the offline STATE is published
 *   while the host is still connected and ingesting. The broker delivers a
 *   client's messages in order, so everything it queued for the host before that STATE comes
 *   first (the host's own STATE echo marks the end of it); edges that follow this host answer
 *   the offline STATE with their DDEATHs and NDEATH and store from then on, so what they sent
 *   before reaches the host ahead of their NDEATH. The host disconnects once the echo arrived
 *   and no node it follows is online any more, or after `stopDrainMs`. Its MQTT session is
 *   clean (Sparkplug requires it of a host): whatever it has not read when it disconnects, the
 *   broker drops.
 * - NBIRTH/DBIRTH declare the tags (relayed-tag-id.ts) and their alias table; NDATA/DDATA
 *   update them (metric-values.ts). `seq` must follow on from the previous message of the
 *   node (mod 256): a gap, a metric or alias not in the births, or DATA before any birth sends
 *   a rebirth request (NCMD `Node Control/Rebirth` = true), at most one per node every
 *   `rebirthIntervalMs` (a request due sooner waits for the end of the interval).
 * - NDEATH with the bdSeq of the node's NBIRTH (an NDEATH of an older session is ignored) turns
 *   the node's and its devices' tags Unavailable at once, DDEATH the device's; losing the
 *   broker turns every tag of the driver Unavailable. A node that sends nothing for
 *   `staleAfterMs` has its Good tags shown Stale (NoUpdate) until it speaks again.
 * - Metrics flagged `is_historical` go to history at their own timestamps (TagStore
 *   `writeHistorical`), never to the tags' current samples.
 * - Writes (with `allowWrites`): a DCMD (NCMD for a node metric) carrying the metric. The tag is
 *   shown Stale (tagd's word for Uncertain) with its last confirmed value until DATA of the
 *   edge carries the value written: then the write answers Good. Without it within
 *   `writeConfirmTimeoutMs`, the tag goes back to its last confirmed sample and the write
 *   answers Uncertain (OutcomeUnknown): sent, not confirmed.
 */

import { hostname } from 'node:os';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { TimerHandle } from '../../src/clock.js';
import { BrokerConnection } from '../../src/publishers/mqtt/broker-connection.js';
import { readBrokerAuth } from '../../src/publishers/mqtt/broker-files.js';
import { parseState } from '../../src/publishers/mqtt/primary-host-state.js';
import { decode, encode, rebirthMetric } from '../../src/publishers/mqtt/sparkplug-payloads.js';
import type { RelayNodeReport, RelaySource } from '../../src/runtime/relay-report.js';
import type { Sample } from '../../src/tags/sample.js';
import { compileTagPattern, type TagMatcher } from '../../src/tags/tag-pattern.js';
import { ConnectionLifecycle } from '../connection-lifecycle.js';
import type {
  Driver,
  DriverDeps,
  DriverStatus,
  WritableTag,
  WriteRequest,
  WriteResult,
} from '../driver.js';
import { unavailableSample } from '../unavailable-sample.js';
import { commandValue, commandValueProblem, sameValue } from './command-value.js';
import {
  type DeviceState,
  type EdgeNodeState,
  type MetricSlot,
  newEdgeNode,
  slotsOf,
} from './edge-node.js';
import {
  describedBy,
  epochMs,
  isScalarType,
  metricValue,
  type PropertySet,
  qualityCode,
  qualityOfCode,
  unsignedCount,
} from './metric-values.js';
import { relayedTagId } from './relayed-tag-id.js';
import type { SparkplugDriverConfig } from './schema.js';

/** The Sparkplug topic namespace. */
const namespace = 'spBv1.0';
/** Historical metrics within this long mean a catch-up is under way, ms. */
export const catchUpWindowMs = 10_000;

type MessageType = 'NBIRTH' | 'NDATA' | 'NDEATH' | 'DBIRTH' | 'DDATA' | 'DDEATH';
const consumed = new Set<string>(['NBIRTH', 'NDATA', 'NDEATH', 'DBIRTH', 'DDATA', 'DDEATH']);
/** Most node names a log line about a drain lists. */
const namesLogged = 20;

/** A clean stop under way: the host ingests until its nodes have left (see the module comment). */
interface Drain {
  /** The offline STATE this stop published; its echo follows everything queued before it. */
  payload: string;
  /** The broker acknowledged the offline STATE (PUBACK). */
  published: boolean;
  /** The echo of the offline STATE arrived: the backlog queued before it is read. */
  echoed: boolean;
  /** False when the STATE subscription was not granted: no echo to wait for. */
  awaitEcho: boolean;
  /** Messages of the edges handled during the drain. */
  messages: number;
  /** Metrics those messages carried in NDATA and DDATA. */
  dataMetrics: number;
  /** Ends the drain if nothing is left to wait for. */
  check(): void;
}

/** The driver; see the module comment. */
export class SparkplugDriver implements Driver, RelaySource {
  readonly name: string;
  readonly type = 'sparkplug';
  private readonly lifecycle: ConnectionLifecycle;
  private connection: BrokerConnection | undefined;
  private client: MqttClient | undefined;
  /** Nodes by `<group>/<node>`. */
  private readonly nodes = new Map<string, EdgeNodeState>();
  /** Every relayed tag, by fullTagId (one metric each). */
  private readonly slots = new Map<string, MetricSlot>();
  private staleTimer: TimerHandle | undefined;
  /** The timestamp of the STATE birth and Will of the current connection attempt. */
  private stateTimestamp = 0;
  /** The client whose subscription to the host's own STATE topic the broker granted. */
  private stateSubscribed: MqttClient | undefined;
  /** The client whose online STATE went out. */
  private announced: MqttClient | undefined;
  /** Set while a clean stop drains. */
  private draining: Drain | undefined;
  private readonly writableListeners = new Set<() => void>();
  private readonly writableMatchers: TagMatcher[] | undefined;
  private readonly counters = {
    messages: 0,
    malformed: 0,
    sequenceErrors: 0,
    rebirthsRequested: 0,
    unknownMetrics: 0,
    dataBeforeBirth: 0,
    staleDeaths: 0,
    skippedMetrics: 0,
    historicalSamples: 0,
    disconnects: 0,
    failedAttempts: 0,
    writesSent: 0,
    writesConfirmed: 0,
    writesUnconfirmed: 0,
  };

  constructor(
    private readonly config: SparkplugDriverConfig,
    private readonly deps: DriverDeps,
  ) {
    this.name = config.name;
    this.lifecycle = new ConnectionLifecycle(
      'Sparkplug',
      deps,
      { reconnectDelayMs: 1000, maxReconnectDelayMs: 30_000 },
      {
        counters: () => ({ ...this.counters }),
        writeUnavailable: (message) => this.writeAllUnavailable(message),
      },
    );
    this.writableMatchers = config.writableTags?.map((pattern) =>
      compileTagPattern(`${config.name}/${pattern}`),
    );
  }

  start(): Promise<void> {
    return this.lifecycle.start(async () => {
      const auth = await readBrokerAuth(this.config, this.deps.profileDir ?? process.cwd());
      const run = this.lifecycle.started();
      const { clock } = this.deps;
      const connection = new BrokerConnection(
        {
          brokerUrl: this.config.brokerUrl,
          clientId: this.config.clientId ?? `tagd-${hostname()}-${this.config.name}`,
          auth,
          clock,
          log: this.deps.logger,
          name: this.config.name,
          role: 'Sparkplug host driver',
        },
        {
          prepare: async () => this.prepare(),
          connected: (client) => this.lifecycle.detached(run, () => this.connected(run, client)),
          disconnected: (reason) => this.disconnected(run, reason),
        },
      );
      this.connection = connection;
      const every = Math.min(1000, Math.floor(this.config.staleAfterMs / 4));
      this.staleTimer = clock.setInterval(() => this.sweepStale(), every);
      connection.start();
    });
  }

  /**
   * Stops the driver: drains first when connected (see the module comment; at most
   * `stopDrainMs`), then disconnects. The tags are written Unavailable once disconnected.
   */
  stop(): Promise<void> {
    return this.lifecycle.stop(async () => {
      const { clock } = this.deps;
      clock.clearTimer(this.staleTimer);
      this.staleTimer = undefined;
      for (const node of this.nodes.values()) {
        clock.clearTimer(node.rebirthTimer);
        node.rebirthTimer = undefined;
      }
      this.settleAllPending('The driver stopped before the edge confirmed the write.');
      const connection = this.connection;
      const client = this.client;
      // The death carries the connection's timestamp, as its Will does. The spec's text asks
      // for the time of the disconnect (tck-id-host-topic-phid-death-payload-disconnect-clean;
      // its TCK accepts any timestamp not older than the Will's): a death stamped later could
      // outrun the next connection's online STATE after the wall clock stepped back, and the
      // edges would ignore that online STATE as older.
      const death = this.statePayload(false);
      let deathSent = false;
      if (client !== undefined && connection?.connected === client && this.config.stopDrainMs > 0) {
        deathSent = await this.drain(client, death);
      }
      this.connection = undefined;
      this.client = undefined;
      this.stateSubscribed = undefined;
      this.announced = undefined;
      await connection?.stop(
        deathSent
          ? undefined
          : (live) =>
              new Promise<void>((resolve, reject) =>
                live.publish(this.stateTopic(), death, { qos: 1, retain: true }, (error) =>
                  error ? reject(error) : resolve(),
                ),
              ),
      );
    });
  }

  /**
   * Publishes the offline STATE and keeps ingesting until its echo arrived and no node is
   * online, the connection closes, or `stopDrainMs` passes (on the injected clock, and in real
   * time too: a clock nobody advances must not hold a stop, and the shutdown behind it).
   * @returns whether the broker acknowledged the offline STATE.
   */
  private drain(client: MqttClient, payload: string): Promise<boolean> {
    const { clock, logger } = this.deps;
    const boundMs = this.config.stopDrainMs;
    const started = clock.now();
    const realStart = Date.now();
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle | undefined;
      let realTimer: NodeJS.Timeout | undefined;
      const drain: Drain = {
        payload,
        published: false,
        echoed: false,
        awaitEcho: this.stateSubscribed === client,
        messages: 0,
        dataMetrics: 0,
        check: () => {
          if (!drain.published || (drain.awaitEcho && !drain.echoed)) return;
          if (this.onlineNodes().length === 0) finish('drained');
        },
      };
      const finish = (outcome: 'drained' | 'bound' | 'closed' | 'refused') => {
        if (this.draining !== drain) return;
        this.draining = undefined;
        clock.clearTimer(timer);
        clearTimeout(realTimer);
        client.off('close', closed);
        const waitedMs = Math.max(clock.now() - started, Date.now() - realStart);
        const figures = {
          waitedMs,
          messages: drain.messages,
          dataMetrics: drain.dataMetrics,
          backlogRead: drain.echoed,
        };
        if (outcome === 'drained') {
          logger.info(figures, 'Sparkplug host drained before leaving: every edge node left');
        } else if (outcome === 'bound') {
          const online = this.onlineNodes();
          logger.warn(
            {
              ...figures,
              stopDrainMs: boundMs,
              nodesOnline: online.length,
              nodes: online.slice(0, namesLogged),
            },
            `Sparkplug host stopped draining after ${boundMs} ms: ` +
              (drain.echoed || !drain.awaitEcho
                ? `${online.length} edge node(s) sent no NDEATH (an edge that does not follow ` +
                  `this host, primaryHostId '${this.config.hostId}', keeps publishing)`
                : 'the broker had not delivered everything queued before the offline STATE ' +
                  '(the rest is dropped with the session)'),
          );
        } else {
          logger.warn(
            figures,
            outcome === 'closed'
              ? 'Sparkplug host lost the broker while draining'
              : 'Sparkplug host could not publish its offline STATE; not draining',
          );
        }
        resolve(drain.published);
      };
      const closed = () => finish('closed');
      this.draining = drain;
      client.once('close', closed);
      timer = clock.setTimeout(() => finish('bound'), boundMs);
      realTimer = setTimeout(() => finish('bound'), boundMs);
      client.publish(this.stateTopic(), payload, { qos: 1, retain: true }, (error) => {
        if (error) {
          logger.debug({ err: error }, 'Sparkplug offline STATE not published');
          finish('refused');
          return;
        }
        drain.published = true;
        drain.check();
      });
    });
  }

  /** The `<group>/<node>` of every node online. */
  private onlineNodes(): string[] {
    const online: string[] = [];
    for (const [key, node] of this.nodes) if (node.online) online.push(key);
    return online;
  }

  status(): DriverStatus {
    return this.lifecycle.status(this.slots.size);
  }

  // ---- the broker connection ----

  private stateTopic(): string {
    return `${namespace}/STATE/${this.config.hostId}`;
  }

  private statePayload(online: boolean): string {
    return JSON.stringify({ online, timestamp: this.stateTimestamp });
  }

  /** Each attempt's Will: the offline STATE with the timestamp its online STATE will carry. */
  private prepare(): Partial<IClientOptions> {
    this.stateTimestamp = this.deps.clock.now();
    return {
      will: {
        topic: this.stateTopic(),
        payload: Buffer.from(this.statePayload(false)),
        qos: 1,
        retain: true,
      },
    };
  }

  private async connected(run: number, client: MqttClient): Promise<void> {
    if (!this.lifecycle.isCurrent(run)) return;
    client.on('message', (topic, payload, packet) => {
      if (this.client !== client) return;
      try {
        if (topic === this.stateTopic()) this.ownState(client, payload, packet.retain);
        else this.onMessage(topic, payload);
      } catch (error) {
        // A payload tagd cannot make sense of must never stop the driver.
        this.counters.malformed++;
        this.deps.logger.warn({ err: error, topic }, 'Sparkplug message could not be handled');
      }
    });
    const groups = this.config.groupIds ?? ['+'];
    // Its own STATE topic too (Sparkplug 3.0, tck-id-host-topic-phid-birth-sub-required): a
    // late Will of an earlier connection is answered, and a drain sees its offline STATE echo.
    const filters = [
      ...groups.flatMap((group) => [`${namespace}/${group}/+/+`, `${namespace}/${group}/+/+/+`]),
      this.stateTopic(),
    ];
    // Messages are handled from the first one the subscriptions bring (a birth is sent once).
    this.client = client;
    try {
      const granted = await client.subscribeAsync(filters, { qos: 1 });
      const refused = granted.filter((grant) => grant.qos >= 128).map((grant) => grant.topic);
      if (refused.length > 0) {
        this.deps.logger.error(
          { refused },
          'The broker refused subscriptions of the Sparkplug host (check its ACL)',
        );
      }
      if (!refused.includes(this.stateTopic())) this.stateSubscribed = client;
      if (this.connection?.connected !== client || !this.lifecycle.isCurrent(run)) return;
      await client.publishAsync(this.stateTopic(), this.statePayload(true), {
        qos: 1,
        retain: true,
      });
      this.announced = client;
    } catch (error) {
      // The connection dropped meanwhile: its close starts the next attempt.
      this.deps.logger.debug({ err: error }, 'Sparkplug host set-up interrupted');
      return;
    }
    this.lifecycle.markAvailable();
    this.lifecycle.resetBackoff();
    this.lifecycle.setState('Running');
    this.deps.logger.info(
      { hostId: this.config.hostId, groups },
      `Sparkplug host '${this.config.hostId}' online`,
    );
    // Nodes known from before the outage: their session on this connection is unknown until
    // they are born again (an edge that follows this host's STATE does so by itself). One
    // whose NBIRTH came already (an edge answers the online STATE at once; its birth can be
    // handled before this continuation runs) is not asked again: a needless rebirth turns its
    // device tags Unavailable and back to Good at the same sample. One whose NBIRTH is still on
    // its way is asked all the same and births twice; history skips the readings its second
    // DBIRTHs re-state (history-logger.ts, `restated`).
    for (const node of this.nodes.values()) if (!node.born) this.requestRebirth(node);
  }

  private disconnected(run: number, reason: string): void {
    if (!this.lifecycle.isCurrent(run) || !this.lifecycle.running) return;
    if (this.client !== undefined) this.counters.disconnects++;
    else this.counters.failedAttempts++;
    this.client = undefined;
    this.stateSubscribed = undefined;
    this.announced = undefined;
    const now = this.deps.clock.now();
    this.settleAllPending('The broker connection was lost before the edge confirmed the write.');
    for (const node of this.nodes.values()) {
      this.deps.clock.clearTimer(node.rebirthTimer);
      node.rebirthTimer = undefined;
      node.born = false;
      node.seq = undefined;
      if (node.online) node.since = now;
      node.online = false;
      node.stale = false;
      for (const device of node.devices.values()) {
        if (device.online) device.since = now;
        device.online = false;
      }
    }
    this.lifecycle.markUnavailable(`The host lost the broker: ${reason}`);
    this.lifecycle.setState('Reconnecting', reason);
  }

  // ---- messages ----

  private onMessage(topic: string, payload: Buffer): void {
    const levels = topic.split('/');
    if (levels.length < 4 || levels.length > 5 || levels[0] !== namespace) return;
    const [, groupId, type, edgeNodeId, deviceId] = levels as [
      string,
      string,
      string,
      string,
      string | undefined,
    ];
    if (!consumed.has(type)) return;
    if ((type.startsWith('D') ? deviceId === undefined : deviceId !== undefined) || !edgeNodeId)
      return;
    this.counters.messages++;
    let decoded: UPayload;
    try {
      decoded = decode(payload);
    } catch (error) {
      this.counters.malformed++;
      this.deps.logger.debug({ err: error, topic }, 'Sparkplug payload could not be decoded');
      return;
    }
    const now = this.deps.clock.now();
    const key = `${groupId}/${edgeNodeId}`;
    let node = this.nodes.get(key);
    if (node === undefined) {
      node = newEdgeNode(groupId, edgeNodeId, now);
      this.nodes.set(key, node);
    }
    const wasStale = node.stale;
    node.lastMessage = now;
    node.stale = false;
    const samples: Sample[] = [];
    switch (type as MessageType) {
      case 'NBIRTH':
        this.nodeBirth(node, decoded, now, samples);
        break;
      case 'NDEATH':
        this.nodeDeath(node, decoded, now, samples);
        break;
      case 'DBIRTH':
        if (this.sequenced(node, decoded))
          this.deviceBirth(node, deviceId as string, decoded, now, samples);
        break;
      case 'DDEATH':
        if (this.sequenced(node, decoded)) this.deviceDeath(node, deviceId as string, now, samples);
        break;
      case 'NDATA':
      case 'DDATA':
        if (this.sequenced(node, decoded)) this.data(node, deviceId, decoded, now, samples);
        break;
    }
    // A stale node that speaks again: its other tags are current again (seq showed nothing
    // was missed, or a rebirth is under way).
    if (wasStale && node.online) {
      const written = new Set(samples.map((sample) => sample.fullTagId));
      for (const slot of slotsOf(node)) {
        if (!written.has(slot.fullTagId) && this.live(node, slot))
          samples.push(this.shown(node, slot));
      }
    }
    if (samples.length > 0) this.deps.store.write(samples);
    const drain = this.draining;
    if (drain !== undefined) {
      drain.messages++;
      if (type === 'NDATA' || type === 'DDATA') drain.dataMetrics += decoded.metrics?.length ?? 0;
      drain.check();
    }
  }

  /**
   * A message on the host's own STATE topic. While draining, the echo of its offline STATE.
   * Otherwise an offline STATE published after this connection's online one (the Will of an
   * earlier connection, delivered late) would leave the edges waiting for a host that is
   * online: the online STATE is published again, with this connection's timestamp (Sparkplug
   * 3.0, tck-id-message-flow-hid-sparkplug-state-message-delivered). The broker's retained copy
   * sent with the subscription (retain flag set) is older than this connection's birth.
   */
  private ownState(client: MqttClient, payload: Buffer, retained: boolean): void {
    const drain = this.draining;
    if (drain !== undefined) {
      if (payload.toString('utf8') === drain.payload) {
        drain.echoed = true;
        drain.check();
      }
      return;
    }
    if (retained || this.announced !== client) return;
    const state = parseState(payload);
    if ('problem' in state || state.online) return;
    this.deps.logger.warn(
      { timestamp: state.timestamp },
      `Sparkplug host '${this.config.hostId}' received an offline STATE of its own id while ` +
        'online: publishing its online STATE again',
    );
    client.publish(
      this.stateTopic(),
      this.statePayload(true),
      { qos: 1, retain: true },
      (error) => {
        if (error) this.deps.logger.debug({ err: error }, 'Sparkplug online STATE not published');
      },
    );
  }

  /**
   * Checks the message's `seq` against the node's session; false when the node has no session
   * (DATA before BIRTH: a rebirth is requested, the message ignored).
   */
  private sequenced(node: EdgeNodeState, payload: UPayload): boolean {
    if (!node.born) {
      this.counters.dataBeforeBirth++;
      this.requestRebirth(node);
      return false;
    }
    const seq = countOrZero(payload.seq);
    const expected = ((node.seq ?? -1) + 1) % 256;
    node.seq = seq;
    if (seq !== expected) {
      node.sequenceErrors++;
      this.counters.sequenceErrors++;
      this.deps.logger.debug(
        { node: `${node.groupId}/${node.edgeNodeId}`, seq, expected },
        'Sparkplug seq gap',
      );
      this.requestRebirth(node);
    }
    return true;
  }

  private nodeBirth(node: EdgeNodeState, payload: UPayload, now: number, samples: Sample[]) {
    const metrics = payload.metrics ?? [];
    const bdSeqMetric = metrics.find((metric) => metric.name === 'bdSeq');
    node.bdSeq = bdSeqMetric ? countOrZero(bdSeqMetric.value) : undefined;
    node.seq = countOrZero(payload.seq);
    node.born = true;
    if (!node.online) node.since = now;
    node.online = true;
    node.lastBirth = now;
    this.deps.clock.clearTimer(node.rebirthTimer);
    node.rebirthTimer = undefined;
    node.aliases.clear();
    node.ignoredAliases.clear();
    // A new session: devices are born again after it, their aliases anew.
    for (const device of node.devices.values()) {
      if (device.online) device.since = now;
      device.online = false;
      for (const slot of device.metrics.values()) {
        slot.born = false;
        this.settlePending(slot, 'The edge node was born again before it confirmed the write.');
        samples.push(this.unavailable(slot, 'The edge node was born again; awaiting DBIRTH.'));
      }
    }
    this.births(node, undefined, node.metrics, metrics, payload, now, samples);
    this.writableChanged();
  }

  private deviceBirth(
    node: EdgeNodeState,
    deviceId: string,
    payload: UPayload,
    now: number,
    samples: Sample[],
  ) {
    let device = node.devices.get(deviceId);
    if (device === undefined) {
      device = { deviceId, online: false, since: now, lastBirth: undefined, metrics: new Map() };
      node.devices.set(deviceId, device);
    }
    if (!device.online) device.since = now;
    device.online = true;
    device.lastBirth = now;
    this.births(node, device, device.metrics, payload.metrics ?? [], payload, now, samples);
    this.writableChanged();
  }

  /** The metrics of a birth: tags declared (or kept), aliases learnt, samples written. */
  private births(
    node: EdgeNodeState,
    device: DeviceState | undefined,
    known: Map<string, MetricSlot>,
    metrics: readonly UMetric[],
    payload: UPayload,
    now: number,
    samples: Sample[],
  ) {
    const deviceId = device?.deviceId;
    const inBirth = new Set<string>();
    const definitions: { fullTagId: string; metadata: Sample['metadata'] }[] = [];
    const fresh: { slot: MetricSlot; metric: UMetric }[] = [];
    for (const metric of metrics) {
      const name = metric.name;
      if (typeof name !== 'string' || name === '') continue;
      if (deviceId === undefined && name === 'bdSeq') {
        // The session's number: in the Relay API, not a tag.
        const alias = aliasKey(metric.alias);
        if (alias !== undefined) node.ignoredAliases.add(alias);
        continue;
      }
      const type = metric.type;
      if (!isScalarType(type)) {
        this.counters.skippedMetrics++;
        continue;
      }
      let slot = known.get(name);
      if (slot === undefined) {
        const fullTagId = relayedTagId(this.name, node.groupId, node.edgeNodeId, deviceId, name);
        if (fullTagId === undefined || this.slots.has(fullTagId)) {
          // Too long a path, or two metrics that map onto one tag: the first one keeps it.
          this.counters.skippedMetrics++;
          continue;
        }
        slot = {
          fullTagId,
          name,
          type,
          alias: undefined,
          nodeKey: `${node.groupId}/${node.edgeNodeId}`,
          deviceId,
          metadata: {},
          confirmed: undefined,
          born: true,
          pending: undefined,
        };
        known.set(name, slot);
        this.slots.set(fullTagId, slot);
      }
      slot.type = type;
      slot.born = true;
      slot.alias = aliasKey(metric.alias);
      if (slot.alias !== undefined) node.aliases.set(slot.alias, slot);
      const source = `sparkplug:${node.groupId}/${node.edgeNodeId}${deviceId !== undefined ? `/${deviceId}` : ''}/${name}`;
      slot.metadata = { ...describedBy(metric.properties as PropertySet | undefined), source };
      inBirth.add(name);
      definitions.push({ fullTagId: slot.fullTagId, metadata: slot.metadata });
      fresh.push({ slot, metric });
    }
    this.deps.store.define(definitions);
    const payloadTime = epochMs(payload.timestamp);
    for (const { slot, metric } of fresh) {
      if (metric.isHistorical) {
        this.historical(node, slot, metric, payloadTime ?? now);
        continue;
      }
      this.confirm(slot, metric, payloadTime ?? now);
      samples.push(this.shown(node, slot));
    }
    for (const slot of known.values()) {
      if (inBirth.has(slot.name)) continue;
      slot.born = false;
      slot.alias = undefined;
      this.settlePending(slot, 'The metric is no longer in the births of the edge.');
      samples.push(this.unavailable(slot, 'The metric is no longer in the births of the edge.'));
    }
  }

  private data(
    node: EdgeNodeState,
    deviceId: string | undefined,
    payload: UPayload,
    now: number,
    samples: Sample[],
  ) {
    let device: DeviceState | undefined;
    if (deviceId !== undefined) {
      device = node.devices.get(deviceId);
      if (device === undefined || !device.online) {
        this.counters.dataBeforeBirth++;
        this.requestRebirth(node);
        return;
      }
    }
    const payloadTime = epochMs(payload.timestamp) ?? now;
    const known = device?.metrics ?? node.metrics;
    let unknown = false;
    for (const metric of payload.metrics ?? []) {
      const alias = aliasKey(metric.alias);
      let slot = alias !== undefined ? node.aliases.get(alias) : undefined;
      if (slot === undefined && typeof metric.name === 'string') slot = known.get(metric.name);
      if (slot === undefined || !slot.born || slot.deviceId !== deviceId) {
        if (
          deviceId === undefined &&
          (metric.name === 'bdSeq' || node.ignoredAliases.has(alias ?? ''))
        )
          continue;
        unknown = true;
        continue;
      }
      if (metric.isHistorical) {
        this.historical(node, slot, metric, payloadTime);
        continue;
      }
      this.confirm(slot, metric, payloadTime);
      samples.push(this.shown(node, slot));
    }
    if (unknown) {
      this.counters.unknownMetrics++;
      this.requestRebirth(node);
    }
  }

  private deviceDeath(node: EdgeNodeState, deviceId: string, now: number, samples: Sample[]) {
    const device = node.devices.get(deviceId);
    if (device === undefined) return;
    if (device.online) device.since = now;
    device.online = false;
    for (const slot of device.metrics.values()) {
      this.settlePending(slot, 'The device died (DDEATH) before it confirmed the write.');
      samples.push(this.unavailable(slot, 'The device is offline (DDEATH).'));
    }
  }

  private nodeDeath(node: EdgeNodeState, payload: UPayload, now: number, samples: Sample[]) {
    const bdSeqMetric = payload.metrics?.find((metric) => metric.name === 'bdSeq');
    const bdSeq = bdSeqMetric ? countOrZero(bdSeqMetric.value) : undefined;
    if (node.bdSeq !== undefined && bdSeq !== undefined && bdSeq !== node.bdSeq) {
      // The Will of an earlier session, delivered late: the current one is alive.
      this.counters.staleDeaths++;
      return;
    }
    node.born = false;
    node.seq = undefined;
    if (node.online) node.since = now;
    node.online = false;
    this.deps.clock.clearTimer(node.rebirthTimer);
    node.rebirthTimer = undefined;
    for (const device of node.devices.values()) {
      if (device.online) device.since = now;
      device.online = false;
    }
    for (const slot of slotsOf(node)) {
      this.settlePending(slot, 'The edge node died (NDEATH) before it confirmed the write.');
      samples.push(this.unavailable(slot, 'The edge node is offline (NDEATH).'));
    }
  }

  /** A metric flagged is_historical: to history at its own timestamp, never the live value. */
  private historical(node: EdgeNodeState, slot: MetricSlot, metric: UMetric, fallback: number) {
    node.historicalSamples++;
    node.lastHistorical = this.deps.clock.now();
    this.counters.historicalSamples++;
    this.deps.store.writeHistorical([this.sampleOf(slot, metric, fallback)]);
  }

  /** The edge's sample of a metric becomes the slot's confirmed one; a pending write settles. */
  private confirm(slot: MetricSlot, metric: UMetric, fallback: number): void {
    const sample = this.sampleOf(slot, metric, fallback);
    slot.confirmed = sample;
    const pending = slot.pending;
    if (
      pending !== undefined &&
      sample.value !== undefined &&
      sameValue(pending.value, sample.value, sample.metadata?.valueText)
    ) {
      this.counters.writesConfirmed++;
      this.deps.clock.clearTimer(pending.timer);
      slot.pending = undefined;
      pending.settle({ status: 'Good' });
    }
  }

  /** The sample a metric carries, in the tag's terms (metric-values.ts). */
  private sampleOf(slot: MetricSlot, metric: UMetric, fallback: number): Sample {
    const time = epochMs(metric.timestamp) ?? fallback;
    const code = qualityCode(metric.properties as PropertySet | undefined);
    const value = metric.isNull ? undefined : metricValue(slot.type, metric.value);
    const base = { fullTagId: slot.fullTagId, utcTimestamp: new Date(time).toISOString() };
    if (value === undefined) {
      const bad = code !== undefined && code < 64;
      return {
        ...base,
        quality: bad ? 'Bad' : 'Unavailable',
        message: bad
          ? `The edge reports the metric Bad (Quality ${code}) without a value.`
          : 'The edge sent the metric without a value.',
        metadata: slot.metadata,
      };
    }
    const quality = code === undefined ? 'Good' : qualityOfCode(code);
    const metadata =
      value.valueText !== undefined
        ? { ...slot.metadata, valueText: value.valueText }
        : slot.metadata;
    if (quality === 'Bad') {
      return {
        ...base,
        quality,
        message: `The edge reports the metric Bad (Quality ${code}).`,
        metadata,
      };
    }
    return {
      ...base,
      quality,
      value: value.value,
      ...(quality === 'Stale'
        ? { message: `The edge reports the value Uncertain (Quality ${code}).` }
        : {}),
      metadata,
    };
  }

  /** Whether the tag shows what its edge said (its node and device online). */
  private live(node: EdgeNodeState, slot: MetricSlot): boolean {
    if (!node.online || !slot.born || slot.confirmed === undefined) return false;
    if (slot.deviceId === undefined) return true;
    return node.devices.get(slot.deviceId)?.online === true;
  }

  /** What the tag shows: the confirmed sample, Stale while a write waits or the node is quiet. */
  private shown(node: EdgeNodeState, slot: MetricSlot): Sample {
    const confirmed = slot.confirmed as Sample;
    if (slot.pending !== undefined && confirmed.quality === 'Good') {
      return {
        ...confirmed,
        quality: 'Stale',
        message: `A write of ${String(slot.pending.value).slice(0, 100)} was sent to the edge; awaiting its confirmation.`,
      };
    }
    if (node.stale && confirmed.quality === 'Good') {
      return {
        ...confirmed,
        quality: 'Stale',
        reason: 'NoUpdate',
        message: `The edge node sent nothing for ${this.config.staleAfterMs} ms.`,
      };
    }
    return confirmed;
  }

  private unavailable(slot: MetricSlot, message: string): Sample {
    return unavailableSample(slot, new Date(this.deps.clock.now()).toISOString(), message);
  }

  private writeAllUnavailable(message: string): void {
    const samples = [...this.slots.values()].map((slot) => this.unavailable(slot, message));
    if (samples.length > 0) this.deps.store.write(samples);
  }

  /** Turns the Good tags of nodes silent beyond `staleAfterMs` Stale. */
  private sweepStale(): void {
    const now = this.deps.clock.now();
    const samples: Sample[] = [];
    for (const node of this.nodes.values()) {
      if (!node.online || node.stale || node.lastMessage === undefined) continue;
      if (now - node.lastMessage < this.config.staleAfterMs) continue;
      node.stale = true;
      for (const slot of slotsOf(node)) {
        if (this.live(node, slot)) samples.push(this.shown(node, slot));
      }
    }
    if (samples.length > 0) this.deps.store.write(samples);
  }

  // ---- rebirth requests ----

  /** Asks the node for new births, at most once per `rebirthIntervalMs`. */
  private requestRebirth(node: EdgeNodeState): void {
    // A host that is leaving asks for nothing: its edges end their sessions anyway.
    if (this.client === undefined || this.draining !== undefined || node.rebirthTimer !== undefined)
      return;
    const { clock } = this.deps;
    const now = clock.now();
    const wait =
      node.lastRebirth === undefined ? 0 : node.lastRebirth + this.config.rebirthIntervalMs - now;
    if (wait > 0) {
      node.rebirthTimer = clock.setTimeout(() => {
        node.rebirthTimer = undefined;
        this.requestRebirth(node);
      }, wait);
      return;
    }
    node.lastRebirth = now;
    node.rebirthsRequested++;
    this.counters.rebirthsRequested++;
    const payload = encode({
      timestamp: now,
      metrics: [{ name: rebirthMetric, type: 'Boolean', value: true, timestamp: now }],
    });
    this.client.publish(
      `${namespace}/${node.groupId}/NCMD/${node.edgeNodeId}`,
      payload,
      { qos: 0 },
      () => {},
    );
    this.deps.logger.info(
      { node: `${node.groupId}/${node.edgeNodeId}` },
      'Sparkplug rebirth requested',
    );
  }

  // ---- writes ----

  writableTags(): readonly WritableTag[] {
    const allowWrites = this.config.allowWrites === true;
    const tags: WritableTag[] = [];
    for (const slot of this.slots.values()) {
      if (!this.writable(slot.fullTagId)) continue;
      tags.push({
        fullTagId: slot.fullTagId,
        allowWrites,
        check: (value, numberText) => {
          const current = this.slots.get(slot.fullTagId);
          if (current === undefined) return 'is not relayed any more';
          return commandValueProblem(current.type, value, numberText);
        },
      });
    }
    return tags;
  }

  private writable(fullTagId: string): boolean {
    const matchers = this.writableMatchers;
    return matchers === undefined || matchers.some((matches) => matches(fullTagId));
  }

  onWritableTagsChanged(listener: () => void): () => void {
    this.writableListeners.add(listener);
    return () => this.writableListeners.delete(listener);
  }

  private writableChanged(): void {
    for (const listener of this.writableListeners) listener();
  }

  async write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    return Promise.all(requests.map((request) => this.writeOne(request)));
  }

  private writeOne(request: WriteRequest): Promise<WriteResult> {
    const slot = this.slots.get(request.fullTagId);
    const client = this.client;
    const node = slot ? this.nodeOf(slot) : undefined;
    if (slot === undefined || node === undefined) {
      return Promise.resolve({
        status: 'Bad',
        reason: 'NotSupported',
        message: 'The tag is not relayed any more; nothing was sent.',
      });
    }
    if (client === undefined || this.draining !== undefined || !this.live(node, slot)) {
      return Promise.resolve({
        status: 'Bad',
        reason: 'Disconnected',
        message:
          client === undefined || this.draining !== undefined
            ? 'The host is not connected to the broker (or is stopping); nothing was sent.'
            : 'The edge node or device is offline; nothing was sent.',
      });
    }
    const problem = commandValueProblem(slot.type, request.value, request.numberText);
    if (problem !== undefined) {
      return Promise.resolve({
        status: 'Bad',
        reason: 'NotSupported',
        message: `The value ${problem}; nothing was sent.`,
      });
    }
    const now = this.deps.clock.now();
    const metric = {
      name: slot.name,
      ...(slot.alias !== undefined ? { alias: Number(slot.alias) } : {}),
      type: slot.type,
      value: commandValue(slot.type, request.value),
      timestamp: now,
    } as unknown as UMetric;
    const topic =
      slot.deviceId === undefined
        ? `${namespace}/${node.groupId}/NCMD/${node.edgeNodeId}`
        : `${namespace}/${node.groupId}/DCMD/${node.edgeNodeId}/${slot.deviceId}`;
    const payload = encode({ timestamp: now, metrics: [metric] });
    return new Promise<WriteResult>((resolve) => {
      client.publish(topic, payload, { qos: 0 }, (error) => {
        if (error) {
          resolve({
            status: 'Uncertain',
            reason: 'OutcomeUnknown',
            message: `The command could not be handed to the broker (${error.message}).`,
          });
          return;
        }
        this.counters.writesSent++;
        this.settlePending(slot, 'A later write replaced it before the edge confirmed it.');
        const pending = {
          value: request.value,
          settle: (result: WriteResult) => resolve(result),
          timer: undefined as TimerHandle | undefined,
        };
        pending.timer = this.deps.clock.setTimeout(() => {
          if (slot.pending !== pending) return;
          slot.pending = undefined;
          this.counters.writesUnconfirmed++;
          resolve({
            status: 'Uncertain',
            reason: 'OutcomeUnknown',
            message: `The command was sent; the edge did not confirm the value within ${this.config.writeConfirmTimeoutMs} ms.`,
          });
          const owner = this.nodeOf(slot);
          if (owner !== undefined && this.live(owner, slot))
            this.deps.store.write([this.shown(owner, slot)]);
        }, this.config.writeConfirmTimeoutMs);
        slot.pending = pending;
        this.deps.store.write([this.shown(node, slot)]);
      });
    });
  }

  /** Answers a pending write Uncertain (the command went out; the edge never confirmed it). */
  private settlePending(slot: MetricSlot, message: string): void {
    const pending = slot.pending;
    if (pending === undefined) return;
    slot.pending = undefined;
    this.deps.clock.clearTimer(pending.timer);
    this.counters.writesUnconfirmed++;
    pending.settle({ status: 'Uncertain', reason: 'OutcomeUnknown', message });
  }

  private settleAllPending(message: string): void {
    for (const slot of this.slots.values()) this.settlePending(slot, message);
  }

  private nodeOf(slot: MetricSlot): EdgeNodeState | undefined {
    return this.nodes.get(slot.nodeKey);
  }

  // ---- the Relay API ----

  relayNodes(): RelayNodeReport[] {
    const now = this.deps.clock.now();
    const iso = (ms: number | undefined) =>
      ms === undefined ? undefined : new Date(ms).toISOString();
    const reports: RelayNodeReport[] = [];
    for (const node of this.nodes.values()) {
      let tagCount = node.metrics.size;
      const devices = [...node.devices.values()].map((device) => {
        tagCount += device.metrics.size;
        return {
          deviceId: device.deviceId,
          online: device.online,
          since: iso(device.since) as string,
          ...(device.lastBirth !== undefined ? { lastBirth: iso(device.lastBirth) as string } : {}),
          tagCount: device.metrics.size,
        };
      });
      reports.push({
        groupId: node.groupId,
        edgeNodeId: node.edgeNodeId,
        online: node.online,
        since: iso(node.since) as string,
        stale: node.stale,
        ...(node.lastBirth !== undefined ? { lastBirth: iso(node.lastBirth) as string } : {}),
        ...(node.lastMessage !== undefined ? { lastMessage: iso(node.lastMessage) as string } : {}),
        ...(node.bdSeq !== undefined ? { bdSeq: node.bdSeq } : {}),
        sequenceErrors: node.sequenceErrors,
        rebirthsRequested: node.rebirthsRequested,
        historicalSamples: node.historicalSamples,
        catchUp: node.lastHistorical !== undefined && now - node.lastHistorical < catchUpWindowMs,
        tagCount,
        devices: devices.sort((a, b) => a.deviceId.localeCompare(b.deviceId)),
      });
    }
    return reports.sort(
      (a, b) => a.groupId.localeCompare(b.groupId) || a.edgeNodeId.localeCompare(b.edgeNodeId),
    );
  }
}

/** A decoded alias (a `long` or a number) as a decimal string; undefined when absent. */
function aliasKey(raw: unknown): string | undefined {
  const value = unsignedCount(raw);
  return value === undefined ? undefined : String(value);
}

/** A decoded count (seq, bdSeq), 0 when absent or not a number. */
function countOrZero(raw: unknown): number {
  return unsignedCount(raw) ?? 0;
}
