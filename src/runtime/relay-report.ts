/**
 * What a relay driver (a Sparkplug host application) tells the Relay API about the edge nodes
 * it has seen: declared here, beside the running drivers, so the API reads it without importing
 * a driver, and the driver implements it (drivers/sparkplug).
 */

/** One device of an edge node. */
export interface RelayDeviceReport {
  /** The Sparkplug device id. */
  deviceId: string;
  /** True between its DBIRTH and its DDEATH (or its node's death, or the broker's loss). */
  online: boolean;
  /** When `online` last changed, ISO 8601 UTC. */
  since: string;
  /** When its last DBIRTH arrived, ISO 8601 UTC. */
  lastBirth?: string;
  /** Tags of the device. */
  tagCount: number;
}

/** One edge node as its host application sees it. */
export interface RelayNodeReport {
  groupId: string;
  edgeNodeId: string;
  /** True between its NBIRTH and its NDEATH (or the broker's loss). */
  online: boolean;
  /** When `online` last changed, ISO 8601 UTC. */
  since: string;
  /** The node sent nothing for longer than the driver's `staleAfterMs`: its tags are Stale. */
  stale: boolean;
  /** When its last NBIRTH arrived, ISO 8601 UTC. */
  lastBirth?: string;
  /** When its last message arrived, ISO 8601 UTC. */
  lastMessage?: string;
  /** The bdSeq of its current session (from the NBIRTH); an NDEATH must carry it. */
  bdSeq?: number;
  /** Messages whose `seq` was not the one expected, since the driver started. */
  sequenceErrors: number;
  /** Rebirth requests (NCMD Node Control/Rebirth) sent to it, since the driver started. */
  rebirthsRequested: number;
  /** Metrics flagged is_historical received from it, since the driver started. */
  historicalSamples: number;
  /** Stored data is being forwarded: historical metrics arrived within the last 10 s. */
  catchUp: boolean;
  /** Tags of the node and its devices. */
  tagCount: number;
  devices: RelayDeviceReport[];
}

/** A driver that relays edge nodes: implemented by the Sparkplug host application driver. */
export interface RelaySource {
  readonly name: string;
  readonly type: string;
  /** Every edge node seen since the driver started, by group then node id. */
  relayNodes(): RelayNodeReport[];
}

/** True when `driver` reports edge nodes. */
export function isRelaySource(driver: object): driver is RelaySource {
  return typeof (driver as Partial<RelaySource>).relayNodes === 'function';
}

/** One relay driver (`sparkplug` or `mqtt`) in the Relay API's list. */
export interface RelayDriverSummary {
  name: string;
  type: string;
  /** The driver's state in the words of the Drivers API. */
  state: 'Running' | 'Reconnecting' | 'Stopped' | 'Failed';
  since: string;
  message?: string;
  tagCount: number;
  /** Edge nodes seen (Sparkplug): in all, online, stale, forwarding stored data. */
  nodes?: { total: number; online: number; stale: number; catchingUp: number };
  /** Sequence errors and rebirth requests over every node (Sparkplug). */
  sequenceErrors?: number;
  rebirthsRequested?: number;
}
