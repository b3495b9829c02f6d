/**
 * A scripted Sparkplug B edge node for the host driver's tests: mqtt.js and Tahu's encoder,
 * with the test choosing every `seq`, alias and death.
 */
import type { ExecutionContext } from 'ava';
import { connectAsync, type MqttClient } from 'mqtt';
import sparkplug from 'sparkplug-payload';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';

const codec = sparkplug.get('spBv1.0') as NonNullable<ReturnType<typeof sparkplug.get>>;

/** Encodes a payload. */
export function encodePayload(payload: UPayload): Buffer {
  return Buffer.from(codec.encodePayload(payload));
}

/** Decodes a payload. */
export function decodePayload(bytes: Uint8Array): UPayload {
  return codec.decodePayload(bytes);
}

/** A command the edge received (NCMD or DCMD). */
export interface ReceivedCommand {
  topic: string;
  payload: UPayload;
}

/** One scripted edge node. */
export class ScriptedEdge {
  seq = 0;
  readonly commands: ReceivedCommand[] = [];
  /** STATE messages of the followed host, in arrival order (see {@link followHost}). */
  readonly hostStates: { online: boolean; timestamp: number; retain: boolean }[] = [];
  private readonly waiters = new Set<() => void>();
  /** Set by {@link followHost}: an offline STATE of the host ends the session with NDEATH. */
  private followed: string | undefined;

  private constructor(
    readonly client: MqttClient,
    readonly groupId: string,
    readonly edgeNodeId: string,
    readonly bdSeq: number,
  ) {
    client.on('message', (topic, payload, packet) => {
      if (topic === `spBv1.0/STATE/${this.followed}`) {
        const state = JSON.parse(payload.toString()) as { online: boolean; timestamp: number };
        this.hostStates.push({ ...state, retain: packet.retain });
        // As an edge with a primary host does (Sparkplug 3.0): the host went offline, the
        // session ends (NDEATH; a real edge also disconnects and stores from then on).
        if (!state.online && !packet.retain) void this.ndeath();
        return;
      }
      this.commands.push({ topic, payload: decodePayload(payload) });
      for (const waiter of [...this.waiters]) waiter();
    });
  }

  /** Connects with the NDEATH of `bdSeq` as its Will and subscribes to its commands. */
  static async connect(
    t: ExecutionContext,
    url: string,
    groupId: string,
    edgeNodeId: string,
    bdSeq = 0,
  ): Promise<ScriptedEdge> {
    const client = await connectAsync(url, {
      reconnectPeriod: 0,
      clientId: `edge-${edgeNodeId}-${bdSeq}-${Math.random().toString(16).slice(2)}`,
      will: {
        topic: `spBv1.0/${groupId}/NDEATH/${edgeNodeId}`,
        payload: encodePayload({ timestamp: Date.now(), metrics: [bdSeqMetric(bdSeq)] }),
        qos: 1,
        retain: false,
      },
    });
    t.teardown(() => client.endAsync(true));
    await client.subscribeAsync([
      `spBv1.0/${groupId}/NCMD/${edgeNodeId}`,
      `spBv1.0/${groupId}/DCMD/${edgeNodeId}/+`,
    ]);
    return new ScriptedEdge(client, groupId, edgeNodeId, bdSeq);
  }

  private topic(type: string, device?: string): string {
    const base = `spBv1.0/${this.groupId}/${type}/${this.edgeNodeId}`;
    return device === undefined ? base : `${base}/${device}`;
  }

  private async send(type: string, device: string | undefined, payload: UPayload) {
    await this.client.publishAsync(this.topic(type, device), encodePayload(payload), { qos: 1 });
  }

  private next(seq?: number): number {
    const value = seq ?? this.seq;
    this.seq = (value + 1) % 256;
    return value;
  }

  /** NBIRTH (seq 0) with bdSeq, Node Control/Rebirth and `metrics`. */
  async nbirth(metrics: UMetric[] = []): Promise<void> {
    this.seq = 0;
    await this.send('NBIRTH', undefined, {
      timestamp: Date.now(),
      seq: this.next(),
      metrics: [
        bdSeqMetric(this.bdSeq),
        { name: 'Node Control/Rebirth', type: 'Boolean', value: false },
        ...metrics,
      ],
    });
  }

  async dbirth(device: string, metrics: UMetric[], seq?: number): Promise<void> {
    await this.send('DBIRTH', device, { timestamp: Date.now(), seq: this.next(seq), metrics });
  }

  async ddata(device: string, metrics: UMetric[], seq?: number): Promise<void> {
    await this.send('DDATA', device, { timestamp: Date.now(), seq: this.next(seq), metrics });
  }

  async ndata(metrics: UMetric[], seq?: number): Promise<void> {
    await this.send('NDATA', undefined, { timestamp: Date.now(), seq: this.next(seq), metrics });
  }

  async ddeath(device: string): Promise<void> {
    await this.send('DDEATH', device, { timestamp: Date.now(), seq: this.next() });
  }

  /** An NDEATH carrying `bdSeq` (the edge's own by default). */
  async ndeath(bdSeq = this.bdSeq): Promise<void> {
    await this.send('NDEATH', undefined, { timestamp: Date.now(), metrics: [bdSeqMetric(bdSeq)] });
  }

  /**
   * Follows a primary host as an edge with `primaryHostId` does: subscribes to its STATE and
   * answers an offline STATE (not the broker's retained copy) with this session's NDEATH.
   */
  async followHost(hostId: string): Promise<void> {
    this.followed = hostId;
    await this.client.subscribeAsync(`spBv1.0/STATE/${hostId}`, { qos: 1 });
  }

  /** Resolves once a command satisfying `predicate` arrived (20 s safety net). */
  waitForCommand(predicate: (command: ReceivedCommand) => boolean): Promise<ReceivedCommand> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.commands.find(predicate);
        if (found === undefined) return;
        this.waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no such command; got ${this.commands.map((c) => c.topic).join(', ')}`));
      }, 20_000);
      this.waiters.add(check);
      check();
    });
  }

  /** Rebirth requests (NCMD Node Control/Rebirth = true) received so far. */
  rebirthRequests(): number {
    return this.commands.filter(
      (command) =>
        command.topic.includes('/NCMD/') &&
        command.payload.metrics?.some(
          (metric) => metric.name === 'Node Control/Rebirth' && metric.value === true,
        ),
    ).length;
  }
}

function bdSeqMetric(bdSeq: number): UMetric {
  return { name: 'bdSeq', type: 'UInt64', value: bdSeq };
}

/** A 64-bit integer as Tahu's encoder takes it exactly: its two 32-bit halves. */
export function long64(value: bigint): never {
  const bits = BigInt.asUintN(64, value);
  return {
    low: Number(bits & 0xffffffffn) | 0,
    high: Number(bits >> 32n) | 0,
    unsigned: true,
  } as never;
}
