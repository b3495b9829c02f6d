/**
 * The Sparkplug B session of an MQTT publisher around its connections:
 * - before each connection: the next bdSeq (0–255, kept in `<state>/sparkplug/<name>.json` so a
 *   restarted gateway does not repeat it) and the NDEATH Will carrying it;
 * - on connect: subscribe to NCMD and DCMD (and, with a `primaryHostId`, the host's STATE), then
 *   NBIRTH and the DBIRTHs; with a `primaryHostId` the births wait for the host to be online
 *   (Sparkplug 3.0: an edge node that waits for a primary host publishes no NBIRTH before its
 *   STATE says online), and the publisher calls {@link SparkplugPublishing.births} then;
 * - NCMD `Node Control/Rebirth` = true: births again (same bdSeq, `seq` from 0);
 * - DCMD, and NCMD of other metrics: write commands, handed to the publisher
 *   (`sparkplug-commands.ts`);
 * - a clean stop: DDEATH per device and the NDEATH, since a DISCONNECT suppresses the Will.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { ProfileNotFoundError } from '../../errors.js';
import { DurableJsonFile } from '../../profile/durable-json-file.js';
import type { Sample } from '../../tags/sample.js';
import type { OutgoingMessage } from './json-messages.js';
import { parseState, stateTopic } from './primary-host-state.js';
import type { MqttConfig } from './schema.js';
import {
  type AlarmNodeState,
  deathPayload,
  decode,
  rebirthMetric,
  SparkplugPayloads,
  sparkplugTopic,
} from './sparkplug-payloads.js';
import type { StoredSample } from './stored-samples.js';

/** Dependencies of {@link SparkplugPublishing}. */
export interface SparkplugDeps {
  clock: Clock;
  log: Logger;
  /** The state directory, where the bdSeq is kept. */
  stateDir: string;
  /** Every member's current sample, for the births. */
  currentSamples: () => Sample[];
  /** The alarms the publisher sends (`alarms`), their current states, for the NBIRTH. */
  currentAlarms?: () => AlarmNodeState[];
}

/** What a connection tells the publisher. */
export interface SparkplugHandlers {
  /** A Rebirth command (the publisher queues the births after its batch). */
  rebirth: () => void;
  /** A DCMD for a device of this node. */
  deviceCommand: (topic: string, device: string, payload: Uint8Array) => void;
  /** An NCMD whose metrics are not Rebirth; `metrics` is how many it held. */
  nodeCommand: (topic: string, metrics: number) => void;
  /** A STATE message of the primary host (only with a `primaryHostId`). */
  hostState: (state: { online: boolean; timestamp: number }) => void;
}

/** The Sparkplug side of one running publisher. */
export class SparkplugPublishing {
  /** The births, aliases and seq of this run. */
  readonly payloads: SparkplugPayloads;
  private readonly primaryHostId: string | undefined;
  private readonly bdSeqFile: DurableJsonFile<{ bdSeq: number }>;
  private readonly groupId: string;
  private readonly edgeNodeId: string;
  /** The bdSeq of the current (or coming) connection. */
  private bdSeq = 0;

  constructor(
    config: MqttConfig,
    private readonly deps: SparkplugDeps,
  ) {
    this.groupId = config.groupId as string;
    this.edgeNodeId = config.edgeNodeId as string;
    this.primaryHostId = config.primaryHostId;
    this.payloads = new SparkplugPayloads(this.groupId, this.edgeNodeId);
    this.bdSeqFile = new DurableJsonFile(join(deps.stateDir, 'sparkplug', `${config.name}.json`));
  }

  /** The bdSeq of the current connection. */
  get currentBdSeq(): number {
    return this.bdSeq;
  }

  /**
   * Before a connection: takes the next bdSeq (stored first, so a crash right after cannot
   * repeat it) and returns the NDEATH Will that carries it.
   */
  async prepare(): Promise<Partial<IClientOptions>> {
    let stored = 0;
    try {
      const read = await this.bdSeqFile.read();
      if (Number.isInteger(read.bdSeq) && read.bdSeq >= 0 && read.bdSeq <= 255) stored = read.bdSeq;
    } catch (error) {
      if (!(error instanceof ProfileNotFoundError)) {
        this.deps.log.warn(
          { err: error },
          'The stored Sparkplug bdSeq is unreadable; starting at 0.',
        );
      }
    }
    this.bdSeq = stored;
    await mkdirFor(this.bdSeqFile.file);
    await this.bdSeqFile.write({ bdSeq: (stored + 1) % 256 });
    return {
      will: {
        topic: sparkplugTopic(this.groupId, 'NDEATH', this.edgeNodeId),
        payload: deathPayload(stored, this.deps.clock.now()),
        qos: 1,
        retain: false,
      },
    };
  }

  /**
   * A new connection: subscribes to the node's NCMD and DCMD (and the primary host's STATE),
   * then publishes the births, unless they wait for the primary host.
   */
  async connected(client: MqttClient, qos: 0 | 1, handlers: SparkplugHandlers): Promise<void> {
    const ncmd = sparkplugTopic(this.groupId, 'NCMD', this.edgeNodeId);
    const dcmdBase = `${sparkplugTopic(this.groupId, 'DCMD', this.edgeNodeId)}/`;
    const state = this.primaryHostId !== undefined ? stateTopic(this.primaryHostId) : undefined;
    client.on('message', (topic, payload) => {
      if (topic === ncmd) {
        if (isRebirthCommand(payload)) {
          this.deps.log.info('Sparkplug Rebirth requested by a host application (NCMD).');
          handlers.rebirth();
        } else {
          handlers.nodeCommand(topic, metricCount(payload));
        }
      } else if (topic.startsWith(dcmdBase)) {
        handlers.deviceCommand(topic, topic.slice(dcmdBase.length), payload);
      } else if (topic === state) {
        const parsed = parseState(payload);
        if ('problem' in parsed) {
          this.deps.log.warn(
            { topic },
            `Sparkplug STATE of primary host '${this.primaryHostId}' ignored: ${parsed.problem}.`,
          );
        } else {
          handlers.hostState(parsed);
        }
      }
    });
    await client.subscribeAsync([ncmd, `${dcmdBase}+`, ...(state ? [state] : [])], { qos: 1 });
    if (state === undefined) await this.births(client, qos);
  }

  /** Publishes NBIRTH and the DBIRTHs with every member's current sample. */
  async births(client: MqttClient, qos: 0 | 1): Promise<void> {
    const messages = this.payloads.births(
      this.bdSeq,
      this.deps.currentSamples(),
      this.deps.clock.now(),
      this.deps.currentAlarms?.() ?? [],
    );
    await publishAll(client, messages, qos);
  }

  /** Historical DDATA of stored samples (see {@link SparkplugPayloads.historical}). */
  historical(samples: readonly StoredSample[]): { messages: OutgoingMessage[]; skipped: number } {
    return this.payloads.historical(samples, this.deps.clock.now());
  }

  /** DDATA messages of a batch, or `rebirth` (see {@link SparkplugPayloads.data}). */
  data(samples: readonly Sample[]): OutgoingMessage[] | 'rebirth' {
    return this.payloads.data(samples, this.deps.clock.now());
  }

  /** The NDATA of alarm states, or `rebirth` (see {@link SparkplugPayloads.alarmData}). */
  alarmData(alarms: readonly AlarmNodeState[]): OutgoingMessage | 'rebirth' {
    return this.payloads.alarmData(alarms, this.deps.clock.now());
  }

  /** Tags removed from the store: see {@link SparkplugPayloads.removed}. */
  removed(fullTagIds: readonly string[]): { deaths: OutgoingMessage[]; rebirth: boolean } {
    return this.payloads.removed(fullTagIds, this.deps.clock.now());
  }

  /**
   * A clean stop: DDEATH per device, then NDEATH with this connection's bdSeq.
   * @param born whether this connection's births went out (else only the NDEATH).
   */
  async farewell(client: MqttClient, qos: 0 | 1, born = true): Promise<void> {
    const now = this.deps.clock.now();
    const messages = [
      // Devices never born in this session (waiting for the primary host) get no DDEATH.
      ...(born ? this.payloads.deaths(now) : []),
      {
        topic: sparkplugTopic(this.groupId, 'NDEATH', this.edgeNodeId),
        payload: deathPayload(this.bdSeq, now),
        samples: 0,
      },
    ];
    await publishAll(client, messages, qos);
  }
}

/** True for an NCMD whose `Node Control/Rebirth` metric is true. */
export function isRebirthCommand(payload: Uint8Array): boolean {
  try {
    return (decode(payload).metrics ?? []).some(
      (metric) => metric.name === rebirthMetric && metric.value === true,
    );
  } catch {
    return false;
  }
}

/** How many metrics a command holds (0 when it cannot be decoded). */
function metricCount(payload: Uint8Array): number {
  try {
    return decode(payload).metrics?.length ?? 0;
  } catch {
    return 0;
  }
}

/** Publishes messages in order; resolves when all are acknowledged (QoS 1) or written. */
function publishAll(client: MqttClient, messages: OutgoingMessage[], qos: 0 | 1): Promise<void> {
  return Promise.all(
    messages.map((message) => client.publishAsync(message.topic, message.payload, { qos })),
  ).then(() => undefined);
}

async function mkdirFor(file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
}
