/**
 * Coalesces the values of one unit and table into the fewest read requests the limits allow.
 *
 * Values are taken in address order; a request starts at the first value not yet covered and
 * takes each following value while the request stays within `maxCount` and the unused
 * addresses skipped to reach the value are at most `maxGap`. A value is never split across two
 * requests. Starting each request as late as possible and extending it as far as possible is
 * optimal (the usual exchange argument for covering intervals by windows): no plan with fewer
 * requests exists. For contiguous single-register values this gives ⌈span / maxCount⌉.
 */

/** One value to read: `count` addresses from `start`. */
export interface PlanItem {
  /** First address, 0-based. */
  start: number;
  /** Addresses (registers or bits) the value occupies, ≥ 1. */
  count: number;
}

/** One read request and the values it serves. */
export interface PlannedBlock {
  /** First address read. */
  start: number;
  /** Addresses read, ≤ maxCount. */
  count: number;
  /** Indexes into the planned items, in address order. */
  items: number[];
}

/** Limits of one plan. */
export interface PlanLimits {
  /** Most addresses in one request (125 registers, 2000 bits at most). */
  maxCount: number;
  /** Unused addresses worth reading through to join two values. */
  maxGap: number;
}

/**
 * Plans the requests for `items`.
 * @throws RangeError when an item is larger than `maxCount` (the schema prevents it).
 */
export function planBlocks(items: readonly PlanItem[], limits: PlanLimits): PlannedBlock[] {
  const order = items.map((_, index) => index);
  order.sort((a, b) => {
    const left = items[a] as PlanItem;
    const right = items[b] as PlanItem;
    return left.start - right.start || left.count - right.count;
  });
  const blocks: PlannedBlock[] = [];
  let current: PlannedBlock | undefined;
  let end = 0; // exclusive end of `current`
  for (const index of order) {
    const item = items[index] as PlanItem;
    if (item.count > limits.maxCount) {
      throw new RangeError(`a value of ${item.count} addresses exceeds ${limits.maxCount}`);
    }
    const itemEnd = item.start + item.count;
    if (
      current !== undefined &&
      item.start - end <= limits.maxGap &&
      Math.max(end, itemEnd) - current.start <= limits.maxCount
    ) {
      current.items.push(index);
      end = Math.max(end, itemEnd);
      current.count = end - current.start;
      continue;
    }
    current = { start: item.start, count: item.count, items: [index] };
    end = itemEnd;
    blocks.push(current);
  }
  return blocks;
}
