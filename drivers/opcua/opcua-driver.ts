/**
 * The OPC UA driver: one server endpoint, one session, the tags monitored through
 * subscriptions (subscription-plan.ts). Every notification message of a subscription becomes
 * one store write. node-opcua keeps the session: when the connection drops every tag turns
 * Unavailable (Disconnected), node-opcua reconnects, reactivates the session and transfers the
 * subscriptions (or recreates them when the server restarted), and the values resume. A
 * connection that cannot be made at all (server certificate not trusted, user refused, no
 * matching endpoint) is retried from scratch with a doubling, capped wait on the injected clock.
 * A subscription that goes silent (no message within its keep-alive bound, its publishing
 * proven by a heartbeat item, see subscription-watchdog.ts) or that the server ends turns its
 * tags Stale and is re-created; when that fails too the connection is made anew.
 * A password that would cross the network in clear is not sent (password-exposure.ts) unless
 * the profile says `allowInsecurePassword`.
 */
import { chmod, mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  AttributeIds,
  ClientMonitoredItem,
  type ClientMonitoredItemBase,
  ClientMonitoredItemGroup,
  type ClientSession,
  type ClientSubscription,
  DataChangeFilter,
  DataChangeNotification,
  DataChangeTrigger,
  type DataType,
  type DataValue,
  DeadbandType,
  MessageSecurityMode,
  type NodeId,
  type NotificationMessage,
  OPCUACertificateManager,
  OPCUAClient,
  type OPCUAClientOptions,
  SecurityPolicy,
  type StatusCode,
  TimestampsToReturn,
  type UserIdentityInfo,
  UserTokenType,
  VariableIds,
} from 'node-opcua';
import type { TimerHandle } from '../../src/clock.js';
import type { Sample, SampleMetadata } from '../../src/tags/sample.js';
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
import { routeNodeOpcuaLogs } from './node-opcua-logging.js';
import { clearPasswordReason } from './password-exposure.js';
import { opcuaPkiDir, pkiDirMode } from './pki.js';
import {
  dataValueSample,
  type MappedTag,
  SampleTimes,
  statusName,
  statusSample,
} from './sample-mapping.js';
import { effectiveSecurityPolicy, type OpcuaDriverConfig } from './schema.js';
import {
  type MonitoredItemBatch,
  planSubscriptions,
  type SubscriptionPlan,
} from './subscription-plan.js';
import { SubscriptionWatchdog, silenceBoundMs } from './subscription-watchdog.js';
import { writableDataType, writeVariant } from './write-value.js';

/** The running totals an OPC UA driver reports in its status `counters`. */
export interface OpcuaCounters {
  /** Value changes received (one per monitored item per notification). */
  notifications: number;
  /** Notification messages received (each one store write). */
  notificationMessages: number;
  /** Subscriptions created on the current session. */
  subscriptions: number;
  /** Monitored items of tags the server accepted (the heartbeat items not counted). */
  monitoredItems: number;
  /** Monitored items the server refused (unknown NodeId, …): their tags are Bad. */
  monitoredItemsFailed: number;
  /** CreateMonitoredItems calls made for tags (the heartbeat items not counted). */
  createCalls: number;
  /** Keep-alive messages received (a subscription with nothing to report). */
  keepAlives: number;
  /**
   * Changes of the server's CurrentTime received on the subscriptions' heartbeat items: the
   * proof that a subscription publishes, not only sends keep-alives.
   */
  heartbeats: number;
  /**
   * Subscriptions that went silent (nothing within their bound, see subscription-watchdog.ts)
   * or that the server ended: their tags turned Stale.
   */
  silentSubscriptions: number;
  /** Subscriptions re-created in place of a silent one. */
  resubscriptions: number;
  /**
   * Connections lost while running, or given up by the driver because a re-created
   * subscription stayed silent too (or could not be re-created).
   */
  disconnects: number;
  /** Connections node-opcua restored (session and subscriptions carried over or recreated). */
  reconnects: number;
  /** Connection attempts that failed before a session was up. */
  failedAttempts: number;
  /** Tags read after a reconnection because no notification had brought them back. */
  valuesReadAfterReconnect: number;
  /** Values sent with the Write service. */
  writes: number;
  /** Writes whose outcome is unknown: sent, and not answered. */
  writesUncertain: number;
}

interface OpcuaTag extends MappedTag {
  nodeId: string;
  publishingIntervalMs: number;
  samplingIntervalMs: number;
  deadband: number | undefined;
  writable: boolean;
  writeMin: number | undefined;
  writeMax: number | undefined;
}

/** The live objects of one connection attempt. */
interface Connection {
  client: OPCUAClient;
  certificates: OPCUACertificateManager;
  session: ClientSession | undefined;
  /** The subscription of each plan (slot), the latest one when it was re-created. */
  subscriptions: WatchedSubscription[];
}

/** A subscription the driver created, with what its watchdog needs. */
interface WatchedSubscription {
  connection: Connection;
  /** The run generation it belongs to. */
  run: number;
  /** Index of its plan: a re-created subscription takes the slot of the one it replaces. */
  slot: number;
  plan: SubscriptionPlan;
  subscription: ClientSubscription;
  /** The tags of its monitored items. */
  tags: OpcuaTag[];
  /** How long it may stay silent, ms (subscription-watchdog.ts). */
  boundMs: number;
  /** False once given up: whatever it still delivers is ignored. */
  live: boolean;
  /** It replaces a subscription that went silent. */
  replacement: boolean;
  /** A data notification came (not only keep-alives). */
  delivered: boolean;
  /** Monitored items of tags the server accepted and refused, for the counters. */
  accepted: number;
  refused: number;
  /** The first CurrentTime its heartbeat item brought, epoch ms. */
  heartbeatFirst: number | undefined;
  /**
   * The heartbeat has changed: the subscription demonstrably publishes, and from now on only
   * notifications prove it alive, not keep-alives (a server whose publishing was disabled still
   * sends those).
   */
  heartbeatArmed: boolean;
}

const securityModes: Record<OpcuaDriverConfig['securityMode'], MessageSecurityMode> = {
  None: MessageSecurityMode.None,
  Sign: MessageSecurityMode.Sign,
  SignAndEncrypt: MessageSecurityMode.SignAndEncrypt,
};

const securityPolicies: Record<ReturnType<typeof effectiveSecurityPolicy>, SecurityPolicy> = {
  None: SecurityPolicy.None,
  Basic256Sha256: SecurityPolicy.Basic256Sha256,
  Aes128_Sha256_RsaOaep: SecurityPolicy.Aes128_Sha256_RsaOaep,
  Aes256_Sha256_RsaPss: SecurityPolicy.Aes256_Sha256_RsaPss,
};

/** How long node-opcua may still hold a timer after disconnecting, ms. */
const closeSettleMs = 150;

/** Most variables read by one Read call after a reconnection. */
const refreshBatch = 500;

/**
 * The heartbeat of each subscription: the server's CurrentTime (Server_ServerStatus_CurrentTime),
 * which changes whenever it is sampled, so a publishing subscription brings a notification at
 * least once per sampling interval.
 */
const heartbeatNodeId = `i=${VariableIds.Server_ServerStatus_CurrentTime}`;

/**
 * How long the driver waits, real time, for the server to close the session of a connection it
 * gives up, before dropping the connection anyway: a server that hangs would hold the close for
 * node-opcua's whole request timeout (15 s).
 */
const abandonGraceMs = 2000;

/** A server's OPC UA variables as tags. */
export class OpcuaDriver implements Driver {
  readonly type = 'opcua';
  readonly name: string;
  private readonly counters: OpcuaCounters = {
    notifications: 0,
    notificationMessages: 0,
    subscriptions: 0,
    monitoredItems: 0,
    monitoredItemsFailed: 0,
    createCalls: 0,
    keepAlives: 0,
    heartbeats: 0,
    silentSubscriptions: 0,
    resubscriptions: 0,
    disconnects: 0,
    reconnects: 0,
    failedAttempts: 0,
    valuesReadAfterReconnect: 0,
    writes: 0,
    writesUncertain: 0,
  };
  /**
   * The DataType of each writable node, read once: a server does not convert a written value,
   * so the Variant must carry the node's own type. Kept across reconnections (a node's type
   * does not change while its server runs; a restarted server with other types answers
   * BadTypeMismatch, reported as such).
   */
  private readonly dataTypes = new Map<string, DataType | string>();
  private readonly byId = new Map<string, OpcuaTag>();
  private readonly tags: OpcuaTag[];
  private connection: Connection | undefined;
  /** Its generation also moves on every new attempt: callbacks of an older one are ignored. */
  private readonly lifecycle: ConnectionLifecycle;
  /** Samples of the notification message being dispatched, written in one batch. */
  private pending: Sample[] = [];
  private flushQueued = false;
  private readonly times = new SampleTimes();
  /** Unregisters this driver from node-opcua's log routing; set while it runs. */
  private unrouteLogs: (() => void) | undefined;
  /** True once the warning about a password sent in clear has been logged. */
  private warnedInsecurePassword = false;
  /** Notices subscriptions that stop sending (on the injected clock). */
  private readonly watchdog: SubscriptionWatchdog<WatchedSubscription>;
  /**
   * Slots whose subscription went silent and has not brought data since, across re-creations
   * and new sessions: the outage is warned about once.
   */
  private readonly recovering = new Set<number>();
  /** Deadlines of subscription re-creations under way. */
  private readonly deadlines = new Set<TimerHandle>();
  /** Connections given up and still being closed; stop waits for them. */
  private readonly closing = new Set<Promise<void>>();

  constructor(
    private readonly config: OpcuaDriverConfig,
    private readonly deps: DriverDeps,
  ) {
    this.name = config.name;
    this.lifecycle = new ConnectionLifecycle('OPC UA', deps, config, {
      counters: () => ({ ...this.counters }),
      writeUnavailable: (message) => this.writeUnavailable(message),
    });
    this.watchdog = new SubscriptionWatchdog(deps.clock, (watched, silentMs) =>
      this.silent(watched, silentMs),
    );
    this.tags = config.tags.map((tag) => {
      const metadata: SampleMetadata = { source: `${config.endpointUrl}#${tag.nodeId}` };
      if (tag.unit !== undefined) metadata.unit = tag.unit;
      if (tag.description !== undefined) metadata.description = tag.description;
      return {
        fullTagId: driverTagId(config.name, tag.name),
        metadata,
        nodeId: tag.nodeId,
        publishingIntervalMs: tag.publishingIntervalMs ?? config.publishingIntervalMs,
        samplingIntervalMs: tag.samplingIntervalMs ?? config.samplingIntervalMs,
        deadband: tag.deadband,
        writable: tag.writable === true,
        writeMin: tag.writeMin,
        writeMax: tag.writeMax,
      };
    });
    for (const tag of this.tags) this.byId.set(tag.fullTagId, tag);
  }

  writableTags(): WritableTag[] {
    return this.tags
      .filter((tag) => tag.writable)
      .map((tag) => ({
        fullTagId: tag.fullTagId,
        allowWrites: this.config.allowWrites === true,
        ...(tag.writeMin !== undefined ? { writeMin: tag.writeMin } : {}),
        ...(tag.writeMax !== undefined ? { writeMax: tag.writeMax } : {}),
        // The JSON type only: the rest depends on the node's DataType (checkWrites).
        check: (value) =>
          typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string'
            ? undefined
            : 'must be a number, boolean or string',
      }));
  }

  /**
   * Reads the DataType of the nodes not seen yet (one Read call; nothing is written) and checks
   * each value fits its node. Without a session nothing can be checked: the write then answers
   * Bad (Disconnected) without sending anything.
   */
  async checkWrites(requests: readonly WriteRequest[]): Promise<(string | undefined)[]> {
    const session = this.connection?.session;
    if (session === undefined || this.lifecycle.status(0).state !== 'Running')
      return requests.map(() => undefined);
    // A node whose DataType the server refuses (BadNodeIdUnknown) passes here: its write
    // answers Bad with that status, without sending anything.
    try {
      await this.learnDataTypes(session, requests);
    } catch (error) {
      // The session went away during the check (a dropped connection): nothing can be checked,
      // and each write then answers Bad (Disconnected) and is audited like any other.
      this.deps.logger.debug({ err: error }, 'DataType read for a write failed');
      return requests.map(() => undefined);
    }
    return requests.map((request) => {
      const tag = this.byId.get(request.fullTagId) as OpcuaTag;
      const type = this.dataTypes.get(tag.nodeId);
      if (type === undefined || typeof type === 'string') return type;
      const variant = writeVariant(type, request.value, request.numberText);
      return typeof variant === 'string' ? `the value ${variant}.` : undefined;
    });
  }

  /**
   * Reads and caches the DataType of the requests' nodes not known yet.
   * @returns the status names of nodes whose DataType the server would not give (not cached:
   *   a node may appear later).
   */
  private async learnDataTypes(
    session: ClientSession,
    requests: readonly WriteRequest[],
  ): Promise<Map<string, string>> {
    const refused = new Map<string, string>();
    const unknown = [
      ...new Set(
        requests
          .map((request) => (this.byId.get(request.fullTagId) as OpcuaTag).nodeId)
          .filter((nodeId) => !this.dataTypes.has(nodeId)),
      ),
    ];
    if (unknown.length === 0) return refused;
    const values = await session.read(
      unknown.map((nodeId) => ({ nodeId, attributeId: AttributeIds.DataType })),
    );
    unknown.forEach((nodeId, index) => {
      const dataValue = values[index];
      if (dataValue === undefined || !dataValue.statusCode.isGood()) {
        refused.set(nodeId, statusName(dataValue?.statusCode.name ?? 'BadNoData'));
        return;
      }
      const id = dataValue.value.value as NodeId;
      const type = writableDataType(id);
      this.dataTypes.set(
        nodeId,
        type ??
          `cannot be written: the node's DataType ${id.toString()} is not one tagd writes (numbers, Boolean, String, DateTime).`,
      );
    });
    return refused;
  }

  /**
   * Writes the values with one Write call, each once: a call that fails (timeout, lost
   * connection) is never repeated, its writes Uncertain. A Good write is read back at once.
   */
  async write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    const session = this.connection?.session;
    // While node-opcua reconnects it would hold a request and send it on the new channel,
    // perhaps long after the client gave up: nothing is sent unless the session is up.
    if (
      session === undefined ||
      this.lifecycle.status(0).state !== 'Running' ||
      this.connection?.client.isReconnecting
    ) {
      return requests.map(() => ({
        status: 'Bad',
        reason: 'Disconnected',
        message: 'The OPC UA server is not connected; nothing was sent.',
      }));
    }
    const results: (WriteResult | undefined)[] = new Array(requests.length);
    const nodes: { index: number; tag: OpcuaTag; value: unknown }[] = [];
    let refused: Map<string, string>;
    try {
      refused = await this.learnDataTypes(session, requests);
    } catch (error) {
      return requests.map(() => ({
        status: 'Bad',
        reason: 'Disconnected',
        message: `The node's DataType could not be read (${(error as Error).message}); nothing was written.`,
      }));
    }
    requests.forEach((request, index) => {
      const tag = this.byId.get(request.fullTagId);
      const type = tag ? this.dataTypes.get(tag.nodeId) : undefined;
      if (tag === undefined || !tag.writable) {
        results[index] = {
          status: 'Bad',
          reason: 'NotSupported',
          message: 'The tag is not writable.',
        };
        return;
      }
      if (type === undefined) {
        const name = refused.get(tag.nodeId) ?? 'BadNoData';
        results[index] = {
          status: 'Bad',
          reason: name as `Bad${string}`,
          message: `The server did not give the node's DataType (${name}); nothing was written.`,
        };
        return;
      }
      const variant = typeof type === 'string' ? type : writeVariant(type, request.value);
      if (typeof variant === 'string') {
        results[index] = { status: 'Bad', reason: 'NotSupported', message: `The value ${variant}` };
        return;
      }
      nodes.push({ index, tag, value: { value: variant } });
    });
    if (nodes.length > 0) {
      this.counters.writes += nodes.length;
      let statuses: { isGood(): boolean; name: string; value: number }[];
      try {
        statuses = await session.write(
          nodes.map(({ tag, value }) => ({
            nodeId: tag.nodeId,
            attributeId: AttributeIds.Value,
            value: value as never,
          })),
        );
      } catch (error) {
        this.counters.writesUncertain += nodes.length;
        for (const { index } of nodes) {
          results[index] = {
            status: 'Uncertain',
            reason: 'OutcomeUnknown',
            message: `The write was sent but not answered (${(error as Error).message}); it is not sent again. Read the tag to see whether the server applied it.`,
          };
        }
        return results as WriteResult[];
      }
      const good: OpcuaTag[] = [];
      nodes.forEach(({ index, tag }, position) => {
        const status = statuses[position];
        results[index] = status === undefined ? undefined : writeResult(status);
        if (status?.isGood()) good.push(tag);
        if (results[index]?.status === 'Uncertain') this.counters.writesUncertain++;
      });
      if (good.length > 0) void this.readBack(session, good);
    }
    return results.map(
      (result) =>
        result ?? {
          status: 'Uncertain',
          reason: 'OutcomeUnknown',
          message: 'The server gave no status for this write.',
        },
    );
  }

  /** Reads written nodes at once, so their new values reach the store before a notification. */
  private async readBack(session: ClientSession, tags: readonly OpcuaTag[]): Promise<void> {
    const run = this.lifecycle.generation;
    try {
      const values = await session.read(
        tags.map((tag) => ({ nodeId: tag.nodeId, attributeId: AttributeIds.Value })),
      );
      if (!this.lifecycle.isCurrent(run)) return;
      const now = this.deps.clock.now();
      this.deps.store.write(
        tags.map((tag, index) => dataValueSample(tag, values[index] as DataValue, now, this.times)),
      );
    } catch (error) {
      this.deps.logger.debug({ err: error }, 'reading back written values failed');
    }
  }

  /** Declares the tags, prepares the PKI folder and starts connecting (does not wait for it). */
  start(): Promise<void> {
    return this.lifecycle.start(() => this.begin());
  }

  stop(): Promise<void> {
    return this.lifecycle.stop(async () => {
      this.pending = [];
      this.watchdog.clear();
      this.recovering.clear();
      for (const deadline of this.deadlines) this.deps.clock.clearTimer(deadline);
      this.deadlines.clear();
      const connection = this.connection;
      this.connection = undefined;
      await Promise.all(this.closing);
      if (connection) {
        await this.close(connection);
        // node-opcua answers its own CloseSecureChannel request on a 100 ms timer of its own:
        // stop resolves once that has run, so nothing of the driver is left behind. Real time
        // on purpose, not the injected clock: the timer waited for is node-opcua's, which runs
        // on real time whatever our clock does (on a manual clock stop would never resolve).
        await new Promise((resolve) => setTimeout(resolve, closeSettleMs));
      }
      this.unrouteLogs?.();
      this.unrouteLogs = undefined;
    });
  }

  status(): DriverStatus {
    return this.lifecycle.status(this.tags.length);
  }

  /** The PKI folder of this driver: `<state>/opcua/pki`. */
  get pkiDir(): string {
    return opcuaPkiDir(this.deps.stateDir);
  }

  private async begin(): Promise<void> {
    const { store, logger } = this.deps;
    const identity = this.config.identity;
    this.unrouteLogs?.();
    this.unrouteLogs = routeNodeOpcuaLogs(
      logger,
      identity.kind === 'username' ? identity.password : undefined,
    );
    store.define(
      this.tags.map((tag) => ({
        fullTagId: tag.fullTagId,
        // No refreshBoundMs: a subscription reports changes only, so a healthy one sends nothing
        // for a value that does not change, and a bound would turn that value Stale. A lost
        // connection turns the tags Unavailable instead (connection_lost below), a silent
        // subscription Stale (the watchdog).
        staleAfterMs: this.config.staleAfterMs,
        metadata: tag.metadata,
      })),
    );
    try {
      await mkdir(this.pkiDir, { recursive: true, mode: pkiDirMode });
      // Made earlier by someone else (an older tagd, a copied state folder) it may be open to
      // others: the private key is in it.
      await chmod(this.pkiDir, pkiDirMode);
    } catch (error) {
      const message = `Cannot create the OPC UA certificate folder ${this.pkiDir}: ${(error as Error).message}`;
      this.unrouteLogs();
      this.unrouteLogs = undefined;
      this.lifecycle.setState('Error', message);
      throw new Error(message, { cause: error });
    }
    const run = this.lifecycle.started();
    logger.info(
      {
        endpointUrl: this.config.endpointUrl,
        securityMode: this.config.securityMode,
        securityPolicy: effectiveSecurityPolicy(this.config),
        identity: identity.kind === 'username' ? `user ${identity.username}` : 'anonymous',
        tags: this.tags.length,
        pki: this.pkiDir,
      },
      'OPC UA driver started',
    );
    this.lifecycle.detached(run, () => this.connect(run));
  }

  private clientOptions(certificates: OPCUACertificateManager): OPCUAClientOptions {
    const config = this.config;
    const baseDir = this.deps.profileDir ?? process.cwd();
    return {
      applicationName: config.applicationName,
      clientName: this.name,
      endpointMustExist: false,
      securityMode: securityModes[config.securityMode],
      securityPolicy: securityPolicies[effectiveSecurityPolicy(config)],
      clientCertificateManager: certificates,
      ...(config.certificateFile !== undefined && config.privateKeyFile !== undefined
        ? {
            certificateFile: resolve(baseDir, config.certificateFile),
            privateKeyFile: resolve(baseDir, config.privateKeyFile),
          }
        : {}),
      requestedSessionTimeout: config.sessionTimeoutMs,
      keepSessionAlive: true,
      // node-opcua reconnects a lost connection by itself, forever, with this backoff.
      connectionStrategy: {
        maxRetry: -1,
        initialDelay: config.reconnectDelayMs,
        maxDelay: config.maxReconnectDelayMs,
        randomisationFactor: 0.1,
      },
    };
  }

  private identity(): UserIdentityInfo {
    const identity = this.config.identity;
    return identity.kind === 'username'
      ? { type: UserTokenType.UserName, userName: identity.username, password: identity.password }
      : { type: UserTokenType.Anonymous };
  }

  private async connect(run: number): Promise<void> {
    const lifecycle = this.lifecycle;
    if (!lifecycle.isCurrent(run) || !lifecycle.running) return;
    const { logger } = this.deps;
    // A fresh certificate manager per attempt reads trusted/ and rejected/ anew, so a
    // certificate trusted with `tagd opcua trust` meanwhile is honoured.
    const certificates = new OPCUACertificateManager({
      rootFolder: this.pkiDir,
      automaticallyAcceptUnknownCertificate: false,
      disableFileWatchers: true,
    });
    const client = OPCUAClient.create(this.clientOptions(certificates));
    const connection: Connection = { client, certificates, session: undefined, subscriptions: [] };
    this.connection = connection;
    client.on('backoff', (count, delayMs) => {
      if (!lifecycle.isCurrent(run)) return;
      const message = `Cannot reach ${this.config.endpointUrl}; connection attempt ${count + 2} in ${Math.round(delayMs)} ms.`;
      lifecycle.markUnavailable(message);
      lifecycle.setState('Reconnecting', message);
      // Once per outage, not once per attempt.
      if (count === 0) logger.warn({ retryInMs: delayMs }, `OPC UA server unreachable: ${message}`);
    });
    try {
      await client.connect(this.config.endpointUrl);
      if (!lifecycle.isCurrent(run)) return;
      await this.checkPasswordProtection(client);
      if (!lifecycle.isCurrent(run)) return;
      const session = await client.createSession(this.identity());
      connection.session = session;
      if (!lifecycle.isCurrent(run)) return;
      this.watch(connection, run);
      await this.subscribe(connection, run);
      if (!lifecycle.isCurrent(run)) return;
    } catch (error) {
      if (!lifecycle.isCurrent(run)) return;
      await this.failed(connection, error as Error, run);
      return;
    }
    logger.info(
      {
        subscriptions: connection.subscriptions.length,
        monitoredItems: this.counters.monitoredItems,
        failedItems: this.counters.monitoredItemsFailed,
      },
      'OPC UA session open, tags subscribed',
    );
    lifecycle.resetBackoff();
    // A subscription may have gone silent while the others were being created: it says so.
    if (this.recovering.size === 0) lifecycle.setState('Running');
  }

  /**
   * Refuses to go on when the password would cross the network in clear (see
   * password-exposure.ts), unless `allowInsecurePassword` says so: then it warns, once.
   * Every endpoint of the server with the configured security is checked, since node-opcua
   * may pick any of them. Only here, when the driver connects: node-opcua's own reconnection
   * of a live session re-sends the password without asking us (it reuses the endpoints it
   * learnt here, unless the server certificate changed meanwhile).
   */
  private async checkPasswordProtection(client: OPCUAClient): Promise<void> {
    const { identity, securityMode } = this.config;
    if (identity.kind !== 'username' || securityMode === 'SignAndEncrypt') return;
    const policy = securityPolicies[effectiveSecurityPolicy(this.config)];
    const endpoints = (await client.getEndpoints()).filter(
      (endpoint) =>
        endpoint.securityMode === securityModes[securityMode] &&
        endpoint.securityPolicyUri === policy,
    );
    const reason = endpoints.map(clearPasswordReason).find((found) => found !== undefined);
    if (reason === undefined) return;
    if (!this.config.allowInsecurePassword) {
      throw new InsecurePasswordError(
        `Refused to send the password of user '${identity.username}' in clear: ${reason}. ` +
          'Use securityMode SignAndEncrypt, or have the server encrypt user tokens, or set ' +
          'allowInsecurePassword to send it anyway.',
      );
    }
    if (!this.warnedInsecurePassword) {
      this.warnedInsecurePassword = true;
      this.deps.logger.warn(
        { endpointUrl: this.config.endpointUrl, user: identity.username },
        `The password of user '${identity.username}' crosses the network in clear ` +
          `(allowInsecurePassword is set): ${reason}.`,
      );
    }
  }

  /** Follows the connection: lost → Unavailable, restored by node-opcua → Running. */
  private watch(connection: Connection, run: number): void {
    const { client } = connection;
    const { logger } = this.deps;
    const lifecycle = this.lifecycle;
    client.on('connection_lost', () => {
      if (!lifecycle.isCurrent(run)) return;
      // Nothing can come meanwhile, and the tags say so already: the subscriptions' silence
      // counts again from the moment node-opcua has restored them.
      this.watchdog.pause();
      this.counters.disconnects++;
      const message = `Connection to ${this.config.endpointUrl} lost; reconnecting.`;
      logger.warn(message);
      this.flush();
      lifecycle.markUnavailable(message);
      lifecycle.setState('Reconnecting', message);
    });
    // 'after_reconnection' only says a new secure channel is up; 'connection_reestablished'
    // comes once the session is reactivated (or recreated) and its subscriptions carried over.
    client.on('connection_reestablished', () => {
      if (!lifecycle.isCurrent(run)) return;
      this.counters.reconnects++;
      logger.info('OPC UA connection restored, subscriptions carried over');
      this.watchdog.resume();
      if (this.recovering.size === 0) lifecycle.setState('Running');
      void this.refresh(connection, run);
    });
  }

  /**
   * After a reconnection that kept the session, the server only republishes what was not yet
   * acknowledged: a value that has not changed since would stay Unavailable. Reads the tags
   * still marked Disconnected and writes what the server has now.
   */
  private async refresh(connection: Connection, run: number): Promise<void> {
    const session = connection.session;
    if (session === undefined) return;
    const { store, clock } = this.deps;
    const outage = (tag: OpcuaTag) => {
      const sample = store.get(tag.fullTagId);
      return sample?.quality === 'Unavailable' && sample.reason === 'Disconnected';
    };
    const waiting = this.tags.filter(outage);
    try {
      for (let start = 0; start < waiting.length; start += refreshBatch) {
        const chunk = waiting.slice(start, start + refreshBatch);
        const values = await session.read(
          chunk.map((tag) => ({ nodeId: tag.nodeId, attributeId: AttributeIds.Value })),
        );
        if (!this.lifecycle.isCurrent(run)) return;
        const samples: Sample[] = [];
        chunk.forEach((tag, index) => {
          const dataValue = values[index];
          // A notification that came in meanwhile is newer than this read.
          if (dataValue !== undefined && outage(tag)) {
            samples.push(dataValueSample(tag, dataValue, clock.now(), this.times));
          }
        });
        this.counters.valuesReadAfterReconnect += samples.length;
        if (samples.length > 0) {
          this.lifecycle.markAvailable();
          store.write(samples);
        }
      }
    } catch (error) {
      if (this.lifecycle.isCurrent(run)) {
        this.deps.logger.debug({ err: error }, 'reading the values after a reconnection failed');
      }
    }
  }

  /** Creates the subscriptions and their monitored items, batch by batch. */
  private async subscribe(connection: Connection, run: number): Promise<void> {
    const session = connection.session as ClientSession;
    const perCall = await this.maxMonitoredItemsPerCall(session);
    const plans = planSubscriptions(this.tags, perCall);
    this.counters.subscriptions = 0;
    this.counters.monitoredItems = 0;
    this.counters.monitoredItemsFailed = 0;
    for (const [slot, plan] of plans.entries()) {
      if (!this.lifecycle.isCurrent(run)) return;
      await this.createSubscription(connection, plan, slot, run, false);
    }
  }

  /**
   * Creates the subscription of one plan, its monitored items and its heartbeat item, and
   * watches it. A re-created one (`replacement`) takes the slot of the silent one.
   */
  private async createSubscription(
    connection: Connection,
    plan: SubscriptionPlan,
    slot: number,
    run: number,
    replacement: boolean,
  ): Promise<void> {
    const session = connection.session as ClientSession;
    const keepAliveCount = Math.max(
      3,
      Math.ceil(this.config.keepAliveIntervalMs / plan.publishingIntervalMs),
    );
    const subscription = await session.createSubscription2({
      requestedPublishingInterval: plan.publishingIntervalMs,
      requestedMaxKeepAliveCount: keepAliveCount,
      // The server keeps the subscription this long without a publish request: long enough
      // to outlive a reconnection, so it can be transferred instead of recreated.
      requestedLifetimeCount: Math.max(
        3 * keepAliveCount,
        Math.ceil(this.config.sessionTimeoutMs / plan.publishingIntervalMs),
      ),
      maxNotificationsPerPublish: 0,
      publishingEnabled: true,
      priority: 10,
    });
    const watched: WatchedSubscription = {
      connection,
      run,
      slot,
      plan,
      subscription,
      tags: plan.batches.flatMap((batch) =>
        batch.tags.map((index) => this.tags[index] as OpcuaTag),
      ),
      boundMs: silenceBoundMs({
        publishingIntervalMs: subscription.publishingInterval,
        maxKeepAliveCount: subscription.maxKeepAliveCount,
      }),
      live: true,
      replacement,
      delivered: false,
      accepted: 0,
      refused: 0,
      heartbeatFirst: undefined,
      heartbeatArmed: false,
    };
    const current = () => watched.live && this.lifecycle.isCurrent(run);
    // An 'error' event without a listener would throw out of node-opcua's socket handler.
    subscription.on('error', (error: Error) => {
      if (current()) this.deps.logger.warn({ err: error }, 'OPC UA subscription error');
    });
    subscription.on('internal_error', (error: Error) => {
      if (current()) this.deps.logger.warn({ err: error }, 'OPC UA subscription error');
    });
    subscription.on('status_changed', (status: StatusCode) => {
      if (!current()) return;
      // GoodSubscriptionTransferred after a reconnection is routine; a Bad one is not.
      const level = status.isGood() ? 'debug' : 'warn';
      this.deps.logger[level](
        { subscriptionId: subscription.subscriptionId, status: status.name },
        `OPC UA subscription status: ${status.name}`,
      );
      // BadTimeout: the server closed the subscription (its lifetime ran out); nothing more
      // will come on it.
      if (status.isBad()) this.ended(watched, `The server ended the subscription (${status.name})`);
    });
    subscription.on('terminated', () => {
      if (current()) this.ended(watched, 'The subscription was terminated');
    });
    subscription.on('keepalive', () => {
      if (!current()) return;
      this.counters.keepAlives++;
      // Keep-alives still come from a subscription whose publishing the server disabled: once
      // the heartbeat has shown that this one publishes, only notifications count.
      if (!watched.heartbeatArmed) this.watchdog.heard(watched);
    });
    subscription.on('received_notifications', (message: NotificationMessage) => {
      if (!current()) return;
      const data = message.notificationData?.some(
        (notification) => notification instanceof DataChangeNotification,
      );
      if (!data) return;
      this.watchdog.heard(watched);
      if (!watched.delivered) {
        watched.delivered = true;
        if (this.recovering.has(slot)) this.recovered(watched);
      }
    });
    const previous = connection.subscriptions[slot];
    if (previous !== undefined) {
      this.counters.monitoredItems -= previous.accepted;
      this.counters.monitoredItemsFailed -= previous.refused;
    } else this.counters.subscriptions++;
    connection.subscriptions[slot] = watched;
    // The heartbeat first: the tags' values then come last, as soon as their items exist.
    const heartbeatMs = await this.monitorHeartbeat(watched);
    for (const batch of plan.batches) {
      if (!current()) return;
      await this.monitor(watched, batch);
    }
    if (!current()) return;
    if (heartbeatMs !== undefined) {
      watched.boundMs = silenceBoundMs({
        publishingIntervalMs: subscription.publishingInterval,
        maxKeepAliveCount: subscription.maxKeepAliveCount,
        heartbeatIntervalMs: heartbeatMs,
      });
    }
    this.deps.logger.debug(
      {
        subscriptionId: subscription.subscriptionId,
        publishingIntervalMs: subscription.publishingInterval,
        maxKeepAliveCount: subscription.maxKeepAliveCount,
        heartbeatMs,
        silenceBoundMs: watched.boundMs,
        replacement,
      },
      'OPC UA subscription created',
    );
    this.watchdog.watch(watched, watched.boundMs);
  }

  /**
   * Monitors the server's CurrentTime in the subscription, sampled once per keep-alive window.
   * @returns the revised sampling interval, ms; undefined when the server refuses the item (the
   *   subscription is then watched through its keep-alives only).
   */
  private async monitorHeartbeat(watched: WatchedSubscription): Promise<number | undefined> {
    const { subscription, run } = watched;
    const item = ClientMonitoredItem.create(
      subscription,
      { nodeId: heartbeatNodeId, attributeId: AttributeIds.Value },
      {
        samplingInterval: subscription.publishingInterval * subscription.maxKeepAliveCount,
        queueSize: 1,
        discardOldest: true,
      },
      TimestampsToReturn.Neither,
    );
    item.on('changed', (dataValue: DataValue) => {
      if (!watched.live || !this.lifecycle.isCurrent(run)) return;
      const value: unknown = dataValue.value?.value;
      const time = value instanceof Date ? value.getTime() : Number.NaN;
      if (!Number.isFinite(time)) return;
      if (watched.heartbeatFirst === undefined) watched.heartbeatFirst = time;
      else if (time !== watched.heartbeatFirst) {
        watched.heartbeatArmed = true;
        this.counters.heartbeats++;
      }
    });
    const accepted = await new Promise<boolean>((resolve) => {
      item.once('initialized', () => resolve(true));
      item.once('err', () => resolve(false));
      // The subscription went away before the item was made (nothing else would settle it).
      item.once('terminated', () => resolve(false));
    });
    if (!accepted) {
      this.deps.logger.debug(
        { status: item.statusCode?.name },
        'the server does not monitor its CurrentTime: the subscription is watched through its keep-alives only',
      );
      return undefined;
    }
    return item.monitoringParameters.samplingInterval;
  }

  /** The server ended a subscription (a status change, a termination): it is silent at once. */
  private ended(watched: WatchedSubscription, reason: string): void {
    this.watchdog.forget(watched);
    this.silent(watched, undefined, reason);
  }

  /**
   * A subscription went silent (nothing within its bound) or was ended: its Good tags turn
   * Stale (NoUpdate) and it is re-created; they are Good again only from the notifications of
   * the new one. When a re-created subscription goes silent before it brought anything, or
   * cannot be re-created within one bound, the connection is given up and made anew.
   */
  private silent(
    watched: WatchedSubscription,
    silentMs: number | undefined,
    reason?: string,
  ): void {
    const { connection, run, slot, subscription } = watched;
    if (!watched.live || !this.lifecycle.isCurrent(run) || connection !== this.connection) return;
    if (connection.client.isReconnecting) {
      // node-opcua is restoring the connection and will carry the subscription over, or not:
      // its silence counts again once the connection is back (the watchdog resumes then).
      this.watchdog.watch(watched, watched.boundMs);
      return;
    }
    watched.live = false;
    this.counters.silentSubscriptions++;
    const window = subscription.publishingInterval * subscription.maxKeepAliveCount;
    const what =
      reason ??
      `No message on the subscription for ${silentMs} ms (the server owes one every ${window} ms)`;
    this.flush();
    this.markStale(watched.tags, `${what}; it is being re-created.`);
    const message = `${what}; re-creating it.`;
    if (this.recovering.has(slot)) this.deps.logger.debug({ slot }, message);
    else {
      this.recovering.add(slot);
      this.deps.logger.warn(
        { subscriptionId: subscription.subscriptionId, tags: watched.tags.length },
        `OPC UA subscription silent: ${message}`,
      );
    }
    this.lifecycle.setState('Reconnecting', message);
    // The server may never answer: the deletion goes on in the background, its outcome unused.
    void subscription.terminate().catch(() => {});
    if (watched.replacement && !watched.delivered) {
      this.abandon(connection, run, `${what}, after it had been re-created.`);
      return;
    }
    this.counters.resubscriptions++;
    void this.recreate(watched);
  }

  /** Re-creates a silent subscription within one bound, or gives the connection up. */
  private async recreate(watched: WatchedSubscription): Promise<void> {
    const { connection, run, slot, plan, boundMs } = watched;
    const { clock } = this.deps;
    const failed = (why: string) =>
      this.abandon(
        connection,
        run,
        `The subscription went silent and re-creating it failed: ${why}.`,
      );
    // On its own timer, not a race of promises: the connection is given up the moment the
    // deadline passes.
    const deadline = clock.setTimeout(() => {
      this.deadlines.delete(deadline);
      failed(`the server did not complete it within ${boundMs} ms`);
    }, boundMs);
    this.deadlines.add(deadline);
    try {
      await this.createSubscription(connection, plan, slot, run, true);
    } catch (error) {
      failed((error as Error).message);
    } finally {
      clock.clearTimer(deadline);
      this.deadlines.delete(deadline);
    }
  }

  /** A subscription of a slot that went silent brought data: the slot has recovered. */
  private recovered(watched: WatchedSubscription): void {
    this.recovering.delete(watched.slot);
    this.deps.logger.info(
      { subscriptionId: watched.subscription.subscriptionId },
      'OPC UA subscription publishes again, values resume',
    );
    if (this.recovering.size === 0 && !watched.connection.client.isReconnecting) {
      this.lifecycle.setState('Running');
    }
  }

  /** Writes the Good ones of `tags` Stale (NoUpdate), keeping their last value. */
  private markStale(tags: readonly OpcuaTag[], message: string): void {
    const { store } = this.deps;
    const stale: Sample[] = [];
    for (const tag of tags) {
      const sample = store.get(tag.fullTagId);
      if (sample?.quality !== 'Good') continue;
      stale.push({ ...sample, quality: 'Stale', reason: 'NoUpdate', message });
    }
    if (stale.length > 0) store.write(stale);
  }

  /**
   * Gives up a connection whose server does not publish (a re-created subscription stayed
   * silent, or could not be re-created): every tag Unavailable, the connection closed in the
   * background, a new one made after the reconnection wait.
   */
  private abandon(connection: Connection, run: number, message: string): void {
    const lifecycle = this.lifecycle;
    if (!lifecycle.isCurrent(run) || this.connection !== connection) return;
    this.counters.disconnects++;
    this.connection = undefined;
    this.forgetSubscriptions(connection);
    const closing: Promise<void> = this.closeQuickly(connection).finally(() =>
      this.closing.delete(closing),
    );
    this.closing.add(closing);
    this.pending = [];
    lifecycle.markUnavailable(`${message} Connecting again.`);
    const next = lifecycle.nextGeneration();
    lifecycle.retryLater(message, () => void this.connect(next));
  }

  /**
   * Stops watching the subscriptions of a connection that is going away. The slots still
   * recovering stay so: the next session's subscriptions serve the same plans, and the outage
   * is over (and logged as such) when they bring data.
   */
  private forgetSubscriptions(connection: Connection): void {
    for (const watched of connection.subscriptions) {
      watched.live = false;
      this.watchdog.forget(watched);
    }
  }

  /** The server's MaxMonitoredItemsPerCall, 0 when it sets none or cannot tell. */
  private async maxMonitoredItemsPerCall(session: ClientSession): Promise<number> {
    try {
      const dataValue = await session.read({
        nodeId: `i=${VariableIds.Server_ServerCapabilities_OperationLimits_MaxMonitoredItemsPerCall}`,
        attributeId: AttributeIds.Value,
      });
      const value: unknown = dataValue.value?.value;
      return dataValue.statusCode.isGood() && typeof value === 'number' ? value : 0;
    } catch {
      return 0;
    }
  }

  /** One CreateMonitoredItems call; refused items turn their tags Bad. */
  private async monitor(watched: WatchedSubscription, batch: MonitoredItemBatch): Promise<void> {
    const { subscription, run } = watched;
    const tags = batch.tags.map((index) => this.tags[index] as OpcuaTag);
    const filter =
      batch.deadband === undefined
        ? null
        : new DataChangeFilter({
            trigger: DataChangeTrigger.StatusValue,
            deadbandType: DeadbandType.Absolute,
            deadbandValue: batch.deadband,
          });
    this.counters.createCalls++;
    const group = ClientMonitoredItemGroup.create(
      subscription,
      tags.map((tag) => ({ nodeId: tag.nodeId, attributeId: AttributeIds.Value })),
      { samplingInterval: batch.samplingIntervalMs, queueSize: 1, discardOldest: true, filter },
      TimestampsToReturn.Both,
    );
    group.on('changed', (_item: ClientMonitoredItemBase, dataValue: DataValue, index: number) => {
      // A subscription given up may still dispatch a message it had received: its values are
      // no longer vouched for, only the re-created one's are.
      if (!watched.live || !this.lifecycle.isCurrent(run)) return;
      const tag = tags[index];
      if (tag === undefined) return;
      this.counters.notifications++;
      this.pending.push(dataValueSample(tag, dataValue, this.deps.clock.now(), this.times));
      if (!this.flushQueued) {
        // A notification message is dispatched synchronously: the microtask runs after its
        // last value, so the whole message is one store write.
        this.flushQueued = true;
        queueMicrotask(() => this.flush());
      }
    });
    await new Promise<void>((resolve, reject) => {
      group.once('initialized', () => resolve());
      group.once('err', (message: string) => reject(new Error(message)));
    });
    const refused: Sample[] = [];
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    group.monitoredItems.forEach((item, index) => {
      const tag = tags[index];
      if (tag === undefined) return;
      const status = item.statusCode;
      if (status === undefined || status.isGood()) {
        this.counters.monitoredItems++;
        watched.accepted++;
        return;
      }
      this.counters.monitoredItemsFailed++;
      watched.refused++;
      refused.push(statusSample(tag, status.name, status.value, utcTimestamp));
    });
    if (refused.length > 0) {
      this.deps.logger.warn(
        { tags: refused.slice(0, 10).map((sample) => `${sample.fullTagId}: ${sample.message}`) },
        `the server refused ${refused.length} of ${tags.length} monitored items`,
      );
      this.deps.store.write(refused);
    }
  }

  private flush(): void {
    this.flushQueued = false;
    if (this.pending.length === 0) return;
    const samples = this.pending;
    this.pending = [];
    this.counters.notificationMessages++;
    this.lifecycle.markAvailable();
    this.deps.store.write(samples);
  }

  /** A connection attempt failed before the session was up: tags Unavailable, retry later. */
  private async failed(connection: Connection, error: Error, run: number): Promise<void> {
    this.counters.failedAttempts++;
    if (this.connection === connection) this.connection = undefined;
    this.forgetSubscriptions(connection);
    await this.close(connection);
    const lifecycle = this.lifecycle;
    if (!lifecycle.isCurrent(run)) return;
    const message = describeFailure(error, this.pkiDir);
    lifecycle.markUnavailable(message);
    const next = lifecycle.nextGeneration();
    lifecycle.retryLater(message, () => this.connect(next));
  }

  /** Closes the session (deleting its subscriptions), the connection and the store handles. */
  private async close(connection: Connection): Promise<void> {
    const { client, session, certificates } = connection;
    client.removeAllListeners();
    try {
      if (session && client.isReconnecting === false) await session.close(true);
    } catch {
      // The server is gone or the session is already closed: nothing left to release there.
    }
    await client.disconnect().catch(() => {});
    await certificates.dispose().catch(() => {});
  }

  /**
   * Closes a connection given up: the session is closed if the server answers within
   * {@link abandonGraceMs} (real time, the time of node-opcua's request), then the connection
   * is dropped whatever the server does.
   */
  private async closeQuickly(connection: Connection): Promise<void> {
    const { client, session, certificates } = connection;
    client.removeAllListeners();
    if (session && client.isReconnecting === false) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        session.close(true).catch(() => {}),
        new Promise((resolve) => {
          timer = setTimeout(resolve, abandonGraceMs);
        }),
      ]);
      clearTimeout(timer);
    }
    // Unanswered, the session is left to expire on the server: disconnect would otherwise try
    // to close it again and wait as long.
    (client as { keepPendingSessionsOnDisconnect: boolean }).keepPendingSessionsOnDisconnect = true;
    await client.disconnect().catch(() => {});
    await certificates.dispose().catch(() => {});
  }

  /** Writes every tag Unavailable (Disconnected); the lifecycle calls it once per outage. */
  private writeUnavailable(message: string): void {
    if (this.tags.length === 0) return;
    this.pending = [];
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write(this.tags.map((tag) => unavailableSample(tag, utcTimestamp, message)));
  }
}

/** The result of one write from the server's status code for it. */
function writeResult(status: { name: string; value: number }): WriteResult {
  const name = statusName(status.name);
  const severity = (status.value >>> 0) >>> 30;
  if (severity === 0) return { status: 'Good' };
  const message = `The server answered ${name} (0x${(status.value >>> 0).toString(16).padStart(8, '0')}).`;
  if (severity === 1) return { status: 'Uncertain', reason: name as `Uncertain${string}`, message };
  return { status: 'Bad', reason: name as `Bad${string}`, message };
}

/** A connection attempt stopped before sending a password in clear. */
class InsecurePasswordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InsecurePasswordError';
  }
}

/** The failure of a connection attempt in plain words, with what to do when there is a fix. */
function describeFailure(error: Error, pkiDir: string): string {
  const text = error.message.replace(/\s+/g, ' ').trim();
  if (/server certificate verification failed/i.test(text)) {
    return (
      'The server certificate is not trusted; it was put in ' +
      `${pkiDir}/rejected. Trust it with 'tagd opcua trust' if it is the right server.`
    );
  }
  if (/BadSecurityChecksFailed|BadCertificateUntrusted/.test(text)) {
    return (
      'The server refused the secure channel: it may not trust the certificate of tagd yet ' +
      `(${pkiDir}/own/certs/client_certificate.pem unless certificateFile is set).`
    );
  }
  if (/BadUserAccessDenied|BadIdentityTokenRejected|BadIdentityTokenInvalid/i.test(text)) {
    return `The server refused the user identity (${text.match(/Bad\w+/)?.[0] ?? 'refused'}).`;
  }
  return text;
}
