/**
 * What a Sparkplug host application keeps about one edge node and its devices: the session
 * (bdSeq, the last `seq`), the alias table of the current births, the metrics as tags with the
 * last sample the edge confirmed, and the counts the Relay API reports.
 */
import type { TimerHandle } from '../../src/clock.js';
import type { Sample, SampleMetadata, TagValue } from '../../src/tags/sample.js';
import type { WriteResult } from '../driver.js';
import type { ScalarType } from './metric-values.js';

/** A write sent as a DCMD/NCMD, waiting for the edge's DATA to confirm it. */
export interface PendingWrite {
  value: TagValue;
  /** Settles the write's result (once). */
  settle: (result: WriteResult) => void;
  timer: TimerHandle | undefined;
}

/** One metric of a birth, as one tag. */
export interface MetricSlot {
  fullTagId: string;
  /** The metric's name in the births, which CMD messages carry. */
  name: string;
  type: ScalarType;
  /** The alias the births gave it, as a decimal string; undefined when none. */
  alias: string | undefined;
  /** Its edge node, `<group>/<node>`. */
  nodeKey: string;
  /** Undefined for a metric of the edge node itself. */
  deviceId: string | undefined;
  metadata: SampleMetadata;
  /** The last sample the edge sent (its quality), undefined before the first. */
  confirmed: Sample | undefined;
  /** True while the metric is in the current births of its node or device. */
  born: boolean;
  pending: PendingWrite | undefined;
}

/** A device of an edge node. */
export interface DeviceState {
  deviceId: string;
  online: boolean;
  /** When `online` last changed, epoch ms. */
  since: number;
  lastBirth: number | undefined;
  /** Metrics by name. */
  metrics: Map<string, MetricSlot>;
}

/** An edge node. */
export interface EdgeNodeState {
  groupId: string;
  edgeNodeId: string;
  online: boolean;
  /** When `online` last changed, epoch ms. */
  since: number;
  /** True once an NBIRTH opened the current session (cleared by its death, a broker loss). */
  born: boolean;
  bdSeq: number | undefined;
  /** The last `seq` received in this session. */
  seq: number | undefined;
  lastBirth: number | undefined;
  lastMessage: number | undefined;
  /** The node was silent beyond `staleAfterMs`: its Good tags are shown Stale. */
  stale: boolean;
  sequenceErrors: number;
  rebirthsRequested: number;
  /** When the last rebirth request was sent, epoch ms. */
  lastRebirth: number | undefined;
  /** A rebirth request waiting for the end of the rate limit's interval. */
  rebirthTimer: TimerHandle | undefined;
  historicalSamples: number;
  lastHistorical: number | undefined;
  /** Metrics of the node itself, by name. */
  metrics: Map<string, MetricSlot>;
  devices: Map<string, DeviceState>;
  /** Alias → metric, for the node and all its devices (Sparkplug aliases are per node). */
  aliases: Map<string, MetricSlot>;
  /** Aliases of the births' metrics that are not tags (bdSeq): known, so never a rebirth. */
  ignoredAliases: Set<string>;
}

/** A new edge node, offline, never born. */
export function newEdgeNode(groupId: string, edgeNodeId: string, now: number): EdgeNodeState {
  return {
    groupId,
    edgeNodeId,
    online: false,
    since: now,
    born: false,
    bdSeq: undefined,
    seq: undefined,
    lastBirth: undefined,
    lastMessage: undefined,
    stale: false,
    sequenceErrors: 0,
    rebirthsRequested: 0,
    lastRebirth: undefined,
    rebirthTimer: undefined,
    historicalSamples: 0,
    lastHistorical: undefined,
    metrics: new Map(),
    devices: new Map(),
    aliases: new Map(),
    ignoredAliases: new Set(),
  };
}

/** Every metric of the node and of its devices. */
export function* slotsOf(node: EdgeNodeState): Iterable<MetricSlot> {
  yield* node.metrics.values();
  for (const device of node.devices.values()) yield* device.metrics.values();
}
