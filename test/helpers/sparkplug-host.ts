/**
 * A scripted Sparkplug primary host for the store-and-forward tests: it publishes its STATE
 * (retained JSON, Sparkplug 3.0), sends commands, and decodes what the edge node published,
 * metric aliases resolved through the DBIRTHs seen.
 */
import type { ExecutionContext } from 'ava';
import { connectAsync, type MqttClient } from 'mqtt';
import type { UMetric } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { decode, encode } from '../../src/publishers/mqtt/sparkplug-payloads.js';
import type { ReceivedMessage } from './mqtt-subscriber.js';

/** One metric as received, its alias resolved. */
export interface ReceivedMetric {
  /** `<device>/<metric name>`, the edge's tag id. */
  tag: string;
  value: unknown;
  timestamp: number;
  historical: boolean;
  isNull: boolean;
}

/** One Sparkplug message as received. */
export interface ReceivedSparkplug {
  type: string;
  device: string | undefined;
  seq: number | undefined;
  /** NBIRTH/NDEATH: the bdSeq metric. */
  bdSeq: number | undefined;
  metrics: ReceivedMetric[];
}

/** A host client on the broker. */
export interface ScriptedHost {
  client: MqttClient;
  /** Publishes `spBv1.0/STATE/<hostId>` retained at QoS 1. */
  state(online: boolean, timestamp: number): Promise<void>;
  /** Sends a DCMD to a device of the edge node. */
  deviceCommand(
    groupId: string,
    edgeNodeId: string,
    device: string,
    metrics: UMetric[],
  ): Promise<void>;
}

/** Connects a host client (ended with the test). */
export async function scriptedHost(
  t: ExecutionContext,
  url: string,
  hostId = 'central',
): Promise<ScriptedHost> {
  const client = await connectAsync(url, {
    reconnectPeriod: 0,
    clientId: `host-${hostId}-${process.pid}`,
  });
  t.teardown(() => client.endAsync(true));
  return {
    client,
    state: async (online, timestamp) => {
      await client.publishAsync(`spBv1.0/STATE/${hostId}`, JSON.stringify({ online, timestamp }), {
        qos: 1,
        retain: true,
      });
    },
    deviceCommand: async (groupId, edgeNodeId, device, metrics) => {
      await client.publishAsync(
        `spBv1.0/${groupId}/DCMD/${edgeNodeId}/${device}`,
        encode({ timestamp: Date.now(), metrics }),
        { qos: 1 },
      );
    },
  };
}

const num = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && 'low' in value
    ? (value as unknown as { toNumber(): number }).toNumber()
    : value;

/** Decodes the edge's messages in order; aliases are resolved by the DBIRTHs before them. */
export function decodeSparkplug(messages: readonly ReceivedMessage[]): ReceivedSparkplug[] {
  const names = new Map<string, string>();
  return messages
    .filter((message) => !message.topic.startsWith('spBv1.0/STATE/'))
    .map((message) => {
      const [, , type, , device] = message.topic.split('/');
      const payload = decode(message.payload);
      const metrics = (payload.metrics ?? []).map((metric) => {
        const alias = num(metric.alias) as number | undefined;
        if (type === 'DBIRTH' && metric.name && alias !== undefined) {
          names.set(`${device}#${alias}`, `${device}/${metric.name}`);
        }
        const tag =
          metric.name && device !== undefined
            ? `${device}/${metric.name}`
            : (names.get(`${device}#${alias}`) ?? (metric.name as string));
        return {
          tag,
          value: num(metric.value),
          timestamp: num(metric.timestamp) as number,
          historical: metric.isHistorical === true,
          isNull: metric.isNull === true,
        };
      });
      const bdSeq = metrics.find((metric) => metric.tag === 'bdSeq')?.value as number | undefined;
      return {
        type: type as string,
        device,
        seq: num(payload.seq) as number | undefined,
        bdSeq,
        metrics,
      };
    });
}
