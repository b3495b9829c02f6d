/**
 * Which subscription carries which tag, and in which CreateMonitoredItems calls: one set of
 * subscriptions per publishing interval, each with at most {@link maxItemsPerSubscription}
 * monitored items; within a subscription, one call per run of items that share their sampling
 * interval and deadband (the monitoring parameters of one call), cut to the per-call limit.
 */

/** Most monitored items in one subscription (many servers cap it near this). */
export const maxItemsPerSubscription = 1000;

/**
 * Most items created by one CreateMonitoredItems call when the server sets no lower
 * MaxMonitoredItemsPerCall: small enough for slow servers to answer well within a request
 * timeout.
 */
export const defaultItemsPerCall = 500;

/** What the plan needs of a tag. */
export interface PlanInput {
  publishingIntervalMs: number;
  samplingIntervalMs: number;
  /** Absolute deadband, or undefined for every change. */
  deadband: number | undefined;
}

/** One CreateMonitoredItems call: items sharing their monitoring parameters. */
export interface MonitoredItemBatch {
  samplingIntervalMs: number;
  deadband: number | undefined;
  /** Indexes of the tags, in the input order. */
  tags: number[];
}

/** One subscription and the calls that fill it. */
export interface SubscriptionPlan {
  publishingIntervalMs: number;
  /** Monitored items in the subscription, at most {@link maxItemsPerSubscription}. */
  itemCount: number;
  batches: MonitoredItemBatch[];
}

/**
 * Plans the subscriptions of a driver's tags.
 * @param itemsPerCall most items per CreateMonitoredItems call: the server's
 *   MaxMonitoredItemsPerCall when it sets one (0 means no limit), capped at
 *   {@link defaultItemsPerCall}.
 * @param perSubscription most items per subscription; default {@link maxItemsPerSubscription}.
 */
export function planSubscriptions(
  tags: readonly PlanInput[],
  itemsPerCall: number = defaultItemsPerCall,
  perSubscription: number = maxItemsPerSubscription,
): SubscriptionPlan[] {
  const callLimit =
    itemsPerCall > 0 ? Math.min(itemsPerCall, defaultItemsPerCall) : defaultItemsPerCall;
  const byInterval = new Map<number, number[]>();
  tags.forEach((tag, index) => {
    const list = byInterval.get(tag.publishingIntervalMs);
    if (list) list.push(index);
    else byInterval.set(tag.publishingIntervalMs, [index]);
  });
  const plans: SubscriptionPlan[] = [];
  for (const [publishingIntervalMs, indexes] of [...byInterval].sort((a, b) => a[0] - b[0])) {
    for (let start = 0; start < indexes.length; start += perSubscription) {
      const members = indexes.slice(start, start + perSubscription);
      plans.push({
        publishingIntervalMs,
        itemCount: members.length,
        batches: batchesOf(tags, members, callLimit),
      });
    }
  }
  return plans;
}

function batchesOf(
  tags: readonly PlanInput[],
  members: readonly number[],
  callLimit: number,
): MonitoredItemBatch[] {
  const byParameters = new Map<string, MonitoredItemBatch>();
  for (const index of members) {
    const tag = tags[index] as PlanInput;
    const key = `${tag.samplingIntervalMs}|${tag.deadband ?? ''}`;
    let group = byParameters.get(key);
    if (group === undefined) {
      group = { samplingIntervalMs: tag.samplingIntervalMs, deadband: tag.deadband, tags: [] };
      byParameters.set(key, group);
    }
    group.tags.push(index);
  }
  const batches: MonitoredItemBatch[] = [];
  for (const group of byParameters.values()) {
    for (let start = 0; start < group.tags.length; start += callLimit) {
      batches.push({ ...group, tags: group.tags.slice(start, start + callLimit) });
    }
  }
  return batches;
}
