/**
 * From the tags of a driver to the requests of each poll: tags are grouped by poll interval,
 * then by unit and table, and each such set is coalesced by the block planner.
 */
import type { SampleMetadata } from '../../src/tags/sample.js';
import { driverTagId } from '../driver.js';
import { planBlocks } from './block-planner.js';
import { type ModbusValueType, registerCount } from './codec.js';
import type { ModbusDriverConfig, ModbusTable, ModbusTagConfig } from './schema.js';

/** What the driver keeps of one tag. */
export interface ModbusTagState {
  fullTagId: string;
  config: ModbusTagConfig;
  type: ModbusValueType;
  unitId: number;
  /** Addresses the value occupies (registers, or 1 bit). */
  count: number;
  metadata: SampleMetadata;
  /** Last value reported Good, for the deadband; undefined after a non-Good sample. */
  lastReported: number | undefined;
  /** The exact decimal reported with {@link lastReported} (64-bit integers beyond 2^53). */
  lastReportedText: string | undefined;
}

/** One read request of a poll and the tags it serves. */
export interface PlannedRequest {
  unitId: number;
  table: ModbusTable;
  functionCode: number;
  start: number;
  count: number;
  tags: ModbusTagState[];
  /**
   * Set once the device refused the whole block with "illegal data address": from then on the
   * block is read one tag per request, so the tags it has still read.
   */
  parts: PlannedRequest[] | undefined;
}

/** The tags read at one interval. */
export interface PollGroup {
  intervalMs: number;
  requests: PlannedRequest[];
}

/** Function code of a read of each table. */
export const readFunction: Record<ModbusTable, number> = {
  coil: 1,
  discreteInput: 2,
  holdingRegister: 3,
  inputRegister: 4,
};

const tableCode: Record<ModbusTable, string> = {
  coil: 'CO',
  discreteInput: 'DI',
  holdingRegister: 'HR',
  inputRegister: 'IR',
};

/** The tags of a driver, with their metadata (`source` e.g. `modbus:10.0.0.5:502/1/HR100`). */
export function tagStates(config: ModbusDriverConfig): ModbusTagState[] {
  const transport = config.transport;
  const where = transport.kind === 'tcp' ? `${transport.host}:${transport.port}` : transport.path;
  return config.tags.map((tag) => {
    const bitTable = tag.table === 'coil' || tag.table === 'discreteInput';
    const type = tag.type ?? (bitTable ? 'bool' : 'uint16');
    const unitId = tag.unitId ?? config.unitId;
    const metadata: SampleMetadata = {
      source: `modbus:${where}/${unitId}/${tableCode[tag.table]}${tag.address}`,
    };
    if (tag.unit !== undefined) metadata.unit = tag.unit;
    if (tag.description !== undefined) metadata.description = tag.description;
    return {
      fullTagId: driverTagId(config.name, tag.name),
      config: tag,
      type,
      unitId,
      count: registerCount(type, tag.length),
      metadata,
      lastReported: undefined,
      lastReportedText: undefined,
    };
  });
}

/** The poll groups of a driver's tags, each with the fewest requests the limits allow. */
export function planPolls(
  config: ModbusDriverConfig,
  tags: readonly ModbusTagState[],
): PollGroup[] {
  const sets = new Map<string, ModbusTagState[]>();
  for (const tag of tags) {
    const interval = tag.config.pollIntervalMs ?? config.pollIntervalMs;
    const key = `${interval}/${tag.unitId}/${tag.config.table}`;
    const set = sets.get(key);
    if (set === undefined) sets.set(key, [tag]);
    else set.push(tag);
  }
  const groups = new Map<number, PollGroup>();
  for (const set of sets.values()) {
    const first = set[0] as ModbusTagState;
    const interval = first.config.pollIntervalMs ?? config.pollIntervalMs;
    const table = first.config.table;
    const bitTable = table === 'coil' || table === 'discreteInput';
    const blocks = planBlocks(
      set.map((tag) => ({ start: tag.config.address, count: tag.count })),
      {
        maxCount: bitTable ? config.maxBitsPerRequest : config.maxRegistersPerRequest,
        maxGap: config.maxGap,
      },
    );
    let group = groups.get(interval);
    if (group === undefined) {
      group = { intervalMs: interval, requests: [] };
      groups.set(interval, group);
    }
    for (const block of blocks) {
      group.requests.push({
        unitId: first.unitId,
        table,
        functionCode: readFunction[table],
        start: block.start,
        count: block.count,
        tags: block.items.map((index) => set[index] as ModbusTagState),
        parts: undefined,
      });
    }
  }
  return [...groups.values()].sort((a, b) => a.intervalMs - b.intervalMs);
}

/** One request per tag of `request`, for a device that refused the block. */
export function splitRequest(request: PlannedRequest): PlannedRequest[] {
  return request.tags.map((tag) => ({
    unitId: request.unitId,
    table: request.table,
    functionCode: request.functionCode,
    start: tag.config.address,
    count: tag.count,
    tags: [tag],
    parts: undefined,
  }));
}

/**
 * The longest one poll takes while the device answers, ms: every request of every group,
 * ⌈requests / concurrent⌉ × `timeoutMs`. The groups share the connection's queue, which sends
 * in order with at most `concurrent` requests in flight, and each group has at most one poll
 * under way: so a group's poll may wait behind one poll of every other group, and n requests
 * in such a queue, each answered within `timeoutMs`, are all answered within
 * ⌈n / concurrent⌉ × `timeoutMs`. A block the device refused counts as its one-tag requests
 * plus the refused one (the poll that splits it sends both).
 * @param concurrent requests in flight at once (1 on an RTU line).
 */
export function longestPollMs(
  groups: readonly PollGroup[],
  concurrent: number,
  timeoutMs: number,
): number {
  let requests = 0;
  for (const group of groups) {
    for (const request of group.requests) {
      requests += request.parts === undefined ? 1 : request.parts.length + 1;
    }
  }
  return Math.ceil(requests / Math.max(1, concurrent)) * timeoutMs;
}
