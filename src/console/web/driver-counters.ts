/**
 * A driver's counters as an operator reads them: running totals turned into rates with units
 * ("12.5 requests/s"), from two polls of `GET /api/v2/Drivers`, and a few counters that are
 * levels, not totals (an OPC UA driver's subscriptions), shown as they are. Pure.
 */

/** How one counter is shown. */
export interface CounterLabel {
  /** Words for the counter, e.g. "Requests". */
  label: string;
  /** The unit of its rate, e.g. "requests/s"; absent for a level shown as a count. */
  rateUnit?: string;
}

// Counters that are how many there are now, not how many happened.
const levels = new Set(['subscriptions', 'monitoredItems', 'monitoredItemsFailed']);

// Where the words of the key do not read well on their own; `<type>.<key>` for one type's.
const labels: Record<string, CounterLabel> = {
  'modbus.malformed': { label: 'Malformed answers', rateUnit: 'answers/s' },
  'can.malformed': { label: 'Malformed records', rateUnit: 'records/s' },
  connectsFailed: { label: 'Failed connects', rateUnit: 'connects/s' },
  failedAttempts: { label: 'Failed connects', rateUnit: 'connects/s' },
  writesUncertain: { label: 'Uncertain writes', rateUnit: 'writes/s' },
  pollsSkipped: { label: 'Polls skipped', rateUnit: 'polls/s' },
  valuesReadAfterReconnect: { label: 'Values read after reconnect', rateUnit: 'values/s' },
  keepAlives: { label: 'Keep-alives', rateUnit: 'keep-alives/s' },
  monitoredItemsFailed: { label: 'Monitored items refused' },
  faults: { label: 'Faults', rateUnit: 'faults/s' },
  'mqtt.retainedIgnored': { label: 'Retained messages ignored', rateUnit: 'messages/s' },
  'mqtt.retainedUnknownAge': {
    label: 'Retained messages of unknown age (Stale)',
    rateUnit: 'messages/s',
  },
};

/**
 * The words and unit of a counter key of a driver type (`framesReceived` → "Frames received",
 * "frames/s").
 */
export function counterLabel(key: string, driverType = ''): CounterLabel {
  const known = labels[`${driverType}.${key}`] ?? labels[key];
  if (known) return known;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(' ');
  const label = words.join(' ');
  const sentence = label.charAt(0).toUpperCase() + label.slice(1);
  if (levels.has(key)) return { label: sentence };
  return { label: sentence, rateUnit: `${words[0]}/s` };
}

/** Counters seen at one moment. */
export interface CounterSnapshot {
  /** When, ms since the epoch. */
  at: number;
  counters: Record<string, number>;
}

/** One counter's line on a driver's card. */
export interface CounterLine {
  key: string;
  label: string;
  /** "12.5 requests/s", "3" (a level), or "—" before a second poll. */
  text: string;
  /** The running total. */
  total: number;
}

/**
 * The counter lines of a driver from its last two snapshots: each total's change per second
 * over the time between them. A total that went down (the driver restarted) starts over: "—".
 */
export function counterLines(
  now: CounterSnapshot,
  before: CounterSnapshot | undefined,
  locale?: string,
  driverType = '',
): CounterLine[] {
  const seconds = before ? (now.at - before.at) / 1000 : 0;
  const format = new Intl.NumberFormat(locale, { maximumFractionDigits: 1 });
  return Object.entries(now.counters).map(([key, total]) => {
    const { label, rateUnit } = counterLabel(key, driverType);
    if (!rateUnit) return { key, label, text: format.format(total), total };
    const previous = before?.counters[key];
    const text =
      previous === undefined || seconds <= 0 || total < previous
        ? '—'
        : `${format.format((total - previous) / seconds)} ${rateUnit}`;
    return { key, label, text, total };
  });
}

/** A driver's counters at its last two polls. */
export interface CounterHistory {
  last: CounterSnapshot;
  before?: CounterSnapshot;
}

/**
 * Records one poll of every driver's counters, at `at` (ms): the last snapshot becomes the base
 * of the rate, so a total that stopped moving reads 0/s at the next poll, not its old rate.
 * Drivers the poll no longer lists are forgotten.
 */
export function recordPoll(
  history: Map<string, CounterHistory>,
  counters: ReadonlyMap<string, Record<string, number>>,
  at: number,
): void {
  for (const name of [...history.keys()]) if (!counters.has(name)) history.delete(name);
  for (const [name, values] of counters) {
    const known = history.get(name);
    history.set(name, { last: { at, counters: values }, ...(known ? { before: known.last } : {}) });
  }
}
