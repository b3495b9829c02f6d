/**
 * The Sparkplug B session of an MQTT publisher around its connections:
 * - before each connection: the next bdSeq (0–255, kept in `<state>/sparkplug/<name>.json` so a
 *   restarted gateway does not repeat it) and the NDEATH Will carrying it;
 * - on connect: subscribe to NCMD and DCMD, then NBIRTH and the DBIRTHs;
 * - NCMD `Node Control/Rebirth` = true: births again (same bdSeq, `seq` from 0);
 * - DCMD: writes are not supported, so it is logged and ignored;
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
import type { MqttConfig } from './schema.js';
import {
  type AlarmNodeState,
  deathPayload,
  decode,
  rebirthMetric,
  SparkplugPayloads,
  sparkplugTopic,
} from './sparkplug-payloads.js';

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

/** The Sparkplug side of one running publisher. */
export class SparkplugPublishing {
  private readonly payloads: SparkplugPayloads;
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
   * A new connection: subscribes to the node's NCMD and DCMD, then publishes the births.
   * @param rebirth what to call on a Rebirth command (the publisher queues it after its batch).
   */
  async connected(client: MqttClient, qos: 0 | 1, rebirth: () => void): Promise<void> {
    const ncmd = sparkplugTopic(this.groupId, 'NCMD', this.edgeNodeId);
    const dcmd = `${sparkplugTopic(this.groupId, 'DCMD', this.edgeNodeId)}/+`;
    client.on('message', (topic, payload) => {
      if (topic === ncmd) {
        if (isRebirthCommand(payload)) {
          this.deps.log.info('Sparkplug Rebirth requested by a host application (NCMD).');
          rebirth();
        } else {
          this.deps.log.info('Sparkplug NCMD ignored: only Node Control/Rebirth is supported.');
        }
      } else if (topic.startsWith(dcmd.slice(0, -1))) {
        this.deps.log.warn(
          { topic },
          'Sparkplug DCMD ignored: tagd does not write to devices through Sparkplug.',
        );
      }
    });
    await client.subscribeAsync([ncmd, dcmd], { qos: 1 });
    await this.births(client, qos);
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

  /** A clean stop: DDEATH per device, then NDEATH with this connection's bdSeq. */
  async farewell(client: MqttClient, qos: 0 | 1): Promise<void> {
    const now = this.deps.clock.now();
    const messages = [
      ...this.payloads.deaths(now),
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

/** Publishes messages in order; resolves when all are acknowledged (QoS 1) or written. */
function publishAll(client: MqttClient, messages: OutgoingMessage[], qos: 0 | 1): Promise<void> {
  return Promise.all(
    messages.map((message) => client.publishAsync(message.topic, message.payload, { qos })),
  ).then(() => undefined);
}

async function mkdirFor(file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
}
