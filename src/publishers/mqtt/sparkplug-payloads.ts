/**
 * Sparkplug B 3.0 payloads of one edge node: topics, metric aliases, the `seq` counter and the
 * mapping of tag samples to metrics. Encoding is Eclipse Tahu's (`sparkplug-payload`); no
 * protobuf is written here.
 *
 * - One device per driver: the first segment of a tag's path is the device id, the rest the
 *   metric name (`Boiler1/Water/Temperature` → device `Boiler1`, metric `Water/Temperature`).
 * - Aliases are numbered from 1 in the order tags are first born and never change while the
 *   publisher runs, so a host application's alias table stays valid across rebirths.
 * - `seq` counts 0–255 over NBIRTH, DBIRTH, DDATA and DDEATH; NBIRTH resets it to 0.
 * - Quality is the metric property `Quality` (Int32, OPC codes): Good 192, Stale 64 (Uncertain;
 *   the last value is kept), Bad and Unavailable 0 (Bad; the metric is null, `is_null`).
 * - Types: a number is Double, a boolean Boolean, a string String; a tag never read is born as
 *   Double. A tag whose type changes, or a member not in the births, needs a rebirth.
 * - Alarms (a publisher with `alarms`): metrics of the node itself, `Alarms/<name>/State`
 *   (String), `Alarms/<name>/Active` and `Alarms/<name>/Acknowledged` (Boolean), in the NBIRTH
 *   and, at each transition, in an NDATA. An alarm not in the NBIRTH needs a rebirth.
 * - Stored data (store-and-forward) goes after the births as DDATA whose metrics are flagged
 *   `is_historical`, each with its own timestamp, at most {@link historicalMetricsPerPayload}
 *   metrics and about {@link historicalPayloadBytes} bytes per payload.
 */
import sparkplug from 'sparkplug-payload';
import type { UMetric, UPayload, UPropertySet } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { Quality, Sample, TagValue } from '../../tags/sample.js';
import type { OutgoingMessage } from './json-messages.js';
import type { StoredSample } from './stored-samples.js';

const codec = sparkplug.get('spBv1.0') as NonNullable<ReturnType<typeof sparkplug.get>>;

/** The Sparkplug topic namespace of version 3.0 (B). */
export const sparkplugNamespace = 'spBv1.0';
/** The NBIRTH metric a host application sets to true in an NCMD to ask for new births. */
export const rebirthMetric = 'Node Control/Rebirth';
/** The quality property's name on every device metric. */
export const qualityProperty = 'Quality';

/** OPC quality codes of the `Quality` metric property. */
export const qualityCodes: Record<Quality, number> = {
  Good: 192,
  Stale: 64,
  Bad: 0,
  Unavailable: 0,
};

/** An alarm as a node metric shows it. */
export interface AlarmNodeState {
  name: string;
  state: string;
  active: boolean;
  acknowledged: boolean;
  /** When it took this state, epoch ms. */
  time: number;
}

/** The names of an alarm's node metrics. */
export function alarmMetricNames(name: string): {
  state: string;
  active: string;
  acknowledged: string;
} {
  return {
    state: `Alarms/${name}/State`,
    active: `Alarms/${name}/Active`,
    acknowledged: `Alarms/${name}/Acknowledged`,
  };
}

/** The `Quality` property set of each quality, shared by the historical metrics. */
const qualityPropertySets: Record<Quality, UPropertySet> = {
  Good: { [qualityProperty]: { type: 'Int32', value: qualityCodes.Good } },
  Stale: { [qualityProperty]: { type: 'Int32', value: qualityCodes.Stale } },
  Bad: { [qualityProperty]: { type: 'Int32', value: qualityCodes.Bad } },
  Unavailable: { [qualityProperty]: { type: 'Int32', value: qualityCodes.Unavailable } },
};

/** Most metrics in one historical DDATA payload. */
export const historicalMetricsPerPayload = 2_000;
/** Rough bound of a historical DDATA payload, bytes (estimated before encoding). */
export const historicalPayloadBytes = 256 * 1024;

/** Sparkplug types used for tag values. */
export type MetricType = 'Double' | 'Boolean' | 'String';

/** The topic of a message type of this edge node (a device id for the D messages). */
export function sparkplugTopic(
  groupId: string,
  type: 'NBIRTH' | 'NDATA' | 'NDEATH' | 'NCMD' | 'DBIRTH' | 'DDATA' | 'DDEATH' | 'DCMD',
  edgeNodeId: string,
  deviceId?: string,
): string {
  const base = `${sparkplugNamespace}/${groupId}/${type}/${edgeNodeId}`;
  return deviceId === undefined ? base : `${base}/${deviceId}`;
}

/** Encodes a payload with Tahu's encoder. */
export function encode(payload: UPayload): Buffer {
  const bytes = codec.encodePayload(payload);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes a payload with Tahu's decoder. */
export function decode(bytes: Uint8Array): UPayload {
  return codec.decodePayload(bytes);
}

/** The NDEATH payload (the MQTT Will): the bdSeq of the connection, no seq. */
export function deathPayload(bdSeq: number, timestamp: number): Buffer {
  return encode({ timestamp, metrics: [{ name: 'bdSeq', type: 'UInt64', value: bdSeq }] });
}

/** The device id and metric name of a tag. */
export function splitTagId(fullTagId: string): { device: string; metric: string } {
  const slash = fullTagId.indexOf('/');
  if (slash < 0) return { device: fullTagId, metric: fullTagId };
  return { device: fullTagId.slice(0, slash), metric: fullTagId.slice(slash + 1) };
}

/** The Sparkplug type of a sample's value; undefined when it has none. */
export function metricTypeOf(sample: Sample): MetricType | undefined {
  return sample.value === undefined ? undefined : typeOfValue(sample.value);
}

/** The Sparkplug type of a value. */
function typeOfValue(value: TagValue): MetricType | undefined {
  switch (typeof value) {
    case 'number':
      return 'Double';
    case 'boolean':
      return 'Boolean';
    case 'string':
      return 'String';
    default:
      return undefined;
  }
}

/** The payloads of one edge node; one instance per running publisher. */
export class SparkplugPayloads {
  private seq = 0;
  private readonly aliases = new Map<string, number>();
  /** Tag → type announced in the current births. */
  private born = new Map<string, MetricType>();
  private devices: string[] = [];
  /** Alarms announced in the current NBIRTH. */
  private bornAlarms = new Set<string>();
  private tagsByAlias: Map<number, string> | undefined;
  /** Tag → device id, for the historical data (many samples of the same tags). */
  private readonly deviceOfTag = new Map<string, string>();

  constructor(
    private readonly groupId: string,
    private readonly edgeNodeId: string,
  ) {}

  /** The tag a metric alias stands for (the aliases of this run), or undefined. */
  tagOfAlias(alias: number): string | undefined {
    if (this.tagsByAlias === undefined || this.tagsByAlias.size !== this.aliases.size) {
      this.tagsByAlias = new Map([...this.aliases].map(([tag, number]) => [number, tag]));
    }
    return this.tagsByAlias.get(alias);
  }

  /** The type a tag was born with in the current births, or undefined when it was not born. */
  bornTypeOf(fullTagId: string): MetricType | undefined {
    return this.born.get(fullTagId);
  }

  /** The devices of the current births. */
  get bornDevices(): readonly string[] {
    return this.devices;
  }

  /**
   * NBIRTH then one DBIRTH per device, holding every member's current sample. Resets `seq`.
   * @param bdSeq the bdSeq of the connection's Will.
   */
  births(
    bdSeq: number,
    samples: readonly Sample[],
    now: number,
    alarms: readonly AlarmNodeState[] = [],
  ): OutgoingMessage[] {
    this.seq = 0;
    this.bornAlarms = new Set(alarms.map((alarm) => alarm.name));
    const messages: OutgoingMessage[] = [
      {
        topic: sparkplugTopic(this.groupId, 'NBIRTH', this.edgeNodeId),
        payload: encode({
          timestamp: now,
          seq: this.nextSeq(),
          metrics: [
            { name: 'bdSeq', type: 'UInt64', value: bdSeq, timestamp: now },
            { name: rebirthMetric, type: 'Boolean', value: false, timestamp: now },
            ...alarms.flatMap((alarm) => this.alarmMetrics(alarm, true)),
          ],
        }),
        samples: 0,
      },
    ];
    const byDevice = new Map<string, Sample[]>();
    for (const sample of samples) {
      const { device } = splitTagId(sample.fullTagId);
      let list = byDevice.get(device);
      if (list === undefined) {
        list = [];
        byDevice.set(device, list);
      }
      list.push(sample);
    }
    const born = new Map<string, MetricType>();
    for (const [device, list] of byDevice) {
      const metrics: UMetric[] = [];
      for (const sample of list) {
        const type = metricTypeOf(sample) ?? this.born.get(sample.fullTagId) ?? 'Double';
        born.set(sample.fullTagId, type);
        metrics.push(this.metric(sample, type, true));
      }
      messages.push({
        topic: sparkplugTopic(this.groupId, 'DBIRTH', this.edgeNodeId, device),
        payload: encode({ timestamp: now, seq: this.nextSeq(), metrics }),
        samples: metrics.length,
      });
    }
    this.born = born;
    this.devices = [...byDevice.keys()];
    return messages;
  }

  /**
   * One DDATA per device with the batch's samples, by alias. `rebirth` when a sample's tag was
   * not born, or its type changed since: the caller publishes new births instead.
   */
  data(samples: readonly Sample[], now: number): OutgoingMessage[] | 'rebirth' {
    const byDevice = new Map<string, UMetric[]>();
    for (const sample of samples) {
      const bornType = this.born.get(sample.fullTagId);
      if (bornType === undefined) return 'rebirth';
      const type = metricTypeOf(sample);
      if (type !== undefined && type !== bornType) return 'rebirth';
      const { device } = splitTagId(sample.fullTagId);
      let metrics = byDevice.get(device);
      if (metrics === undefined) {
        metrics = [];
        byDevice.set(device, metrics);
      }
      metrics.push(this.metric(sample, bornType, false));
    }
    const messages: OutgoingMessage[] = [];
    for (const [device, metrics] of byDevice) {
      messages.push({
        topic: sparkplugTopic(this.groupId, 'DDATA', this.edgeNodeId, device),
        payload: encode({ timestamp: now, seq: this.nextSeq(), metrics }),
        samples: metrics.length,
      });
    }
    return messages;
  }

  /**
   * Stored samples as DDATA after the births, in order per device, every metric flagged
   * `is_historical` with its own timestamp, at most {@link historicalMetricsPerPayload} metrics
   * (and about {@link historicalPayloadBytes} bytes) per payload. A sample of a tag the births
   * do not hold, or whose type differs from the born one, cannot be sent (the host could not
   * place it): it is skipped and counted.
   */
  historical(
    samples: readonly StoredSample[],
    now: number,
  ): { messages: OutgoingMessage[]; skipped: number } {
    const byDevice = new Map<string, UMetric[][]>();
    const bytesOf = new Map<UMetric[], number>();
    let skipped = 0;
    for (const sample of samples) {
      const id = sample.fullTagId;
      const bornType = this.born.get(id);
      const value = sample.value;
      const type = value === undefined ? undefined : typeOfValue(value);
      if (bornType === undefined || (type !== undefined && type !== bornType)) {
        skipped++;
        continue;
      }
      let device = this.deviceOfTag.get(id);
      if (device === undefined) {
        device = splitTagId(id).device;
        this.deviceOfTag.set(id, device);
      }
      let payloads = byDevice.get(device);
      if (payloads === undefined) {
        payloads = [[]];
        byDevice.set(device, payloads);
      }
      let metrics = payloads[payloads.length - 1] as UMetric[];
      // Alias, timestamp, type, value, quality property and flags: about 40 bytes besides a string.
      const size = 40 + (typeof value === 'string' ? value.length * 3 : 0);
      const bytes = bytesOf.get(metrics) ?? 0;
      if (
        metrics.length >= historicalMetricsPerPayload ||
        (metrics.length > 0 && bytes + size > historicalPayloadBytes)
      ) {
        metrics = [];
        payloads.push(metrics);
      }
      bytesOf.set(metrics, (bytesOf.get(metrics) ?? 0) + size);
      const quality = sample.quality;
      const hasValue = (quality === 'Good' || quality === 'Stale') && type !== undefined;
      const metric: UMetric = {
        alias: this.aliases.get(id) as number,
        timestamp: sample.timestamp,
        type: bornType,
        value: hasValue ? (value as TagValue) : null,
        // One shared property set per quality: the encoder only reads it.
        properties: qualityPropertySets[quality],
        isHistorical: true,
      };
      if (!hasValue) metric.isNull = true;
      metrics.push(metric);
    }
    const messages: OutgoingMessage[] = [];
    for (const [device, payloads] of byDevice) {
      for (const metrics of payloads) {
        messages.push({
          topic: sparkplugTopic(this.groupId, 'DDATA', this.edgeNodeId, device),
          payload: encode({ timestamp: now, seq: this.nextSeq(), metrics }),
          samples: metrics.length,
        });
      }
    }
    return { messages, skipped };
  }

  /**
   * Forgets tags removed from the store (their driver was removed or reconfigured): a DDEATH
   * for each born device left without metrics, so a host application does not keep its last
   * values as current.
   * @returns the DDEATHs, and `rebirth` when a device that remains lost metrics (its DBIRTH
   *   still announces them: only new births tell the host they are gone).
   */
  removed(
    fullTagIds: readonly string[],
    now: number,
  ): { deaths: OutgoingMessage[]; rebirth: boolean } {
    const touched = new Set<string>();
    for (const id of fullTagIds) {
      if (this.born.delete(id)) touched.add(splitTagId(id).device);
    }
    const remaining = new Set<string>();
    for (const id of this.born.keys()) remaining.add(splitTagId(id).device);
    const dead = this.devices.filter((device) => touched.has(device) && !remaining.has(device));
    this.devices = this.devices.filter((device) => !dead.includes(device));
    const deaths = dead.map((device) => ({
      topic: sparkplugTopic(this.groupId, 'DDEATH', this.edgeNodeId, device),
      payload: encode({ timestamp: now, seq: this.nextSeq() }),
      samples: 0,
    }));
    return { deaths, rebirth: [...touched].some((device) => remaining.has(device)) };
  }

  /**
   * An NDATA with the node metrics of these alarms (their states after a batch of
   * transitions), or `rebirth` when one was not in the NBIRTH (the caller publishes births,
   * which carry every alarm's state).
   */
  alarmData(alarms: readonly AlarmNodeState[], now: number): OutgoingMessage | 'rebirth' {
    if (alarms.some((alarm) => !this.bornAlarms.has(alarm.name))) return 'rebirth';
    return {
      topic: sparkplugTopic(this.groupId, 'NDATA', this.edgeNodeId),
      payload: encode({
        timestamp: now,
        seq: this.nextSeq(),
        metrics: alarms.flatMap((alarm) => this.alarmMetrics(alarm, false)),
      }),
      samples: 0,
    };
  }

  private alarmMetrics(alarm: AlarmNodeState, withName: boolean): UMetric[] {
    const names = alarmMetricNames(alarm.name);
    const metric = (name: string, type: MetricType, value: string | boolean): UMetric => ({
      ...(withName ? { name } : {}),
      // Node metrics share the alias space with device metrics; the key keeps them apart from a
      // tag of the same path.
      alias: this.aliasOf(`node:${name}`),
      timestamp: alarm.time,
      type,
      value,
    });
    return [
      metric(names.state, 'String', alarm.state),
      metric(names.active, 'Boolean', alarm.active),
      metric(names.acknowledged, 'Boolean', alarm.acknowledged),
    ];
  }

  private aliasOf(key: string): number {
    let alias = this.aliases.get(key);
    if (alias === undefined) {
      alias = this.aliases.size + 1;
      this.aliases.set(key, alias);
    }
    return alias;
  }

  /** One DDEATH per born device (a clean stop). */
  deaths(now: number): OutgoingMessage[] {
    return this.devices.map((device) => ({
      topic: sparkplugTopic(this.groupId, 'DDEATH', this.edgeNodeId, device),
      payload: encode({ timestamp: now, seq: this.nextSeq() }),
      samples: 0,
    }));
  }

  private nextSeq(): number {
    const seq = this.seq;
    this.seq = (seq + 1) % 256;
    return seq;
  }

  private metric(sample: Sample, type: MetricType, withName: boolean): UMetric {
    const alias = this.aliasOf(sample.fullTagId);
    const quality = sample.quality;
    const hasValue =
      (quality === 'Good' || quality === 'Stale') &&
      sample.value !== undefined &&
      metricTypeOf(sample) === type;
    const metric: UMetric = {
      ...(withName ? { name: splitTagId(sample.fullTagId).metric } : {}),
      alias,
      timestamp: Date.parse(sample.utcTimestamp),
      type,
      value: hasValue ? (sample.value as number | boolean | string) : null,
      properties: { [qualityProperty]: { type: 'Int32', value: qualityCodes[quality] } },
    };
    if (!hasValue) metric.isNull = true;
    return metric;
  }
}
