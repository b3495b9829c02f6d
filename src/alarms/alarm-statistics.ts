/**
 * Alarm system performance over a period (ISA-18.2 §16, EEMUA 191): how many alarms reached the
 * operators per 10 minutes, how much of the time was a flood, which alarms are the most
 * frequent, which chatter, which stand (stale), and how much shelving goes on. Computed from
 * the journal's transitions and the alarms' current state; pure.
 *
 * An *annunciated activation* is an `Activated` transition whose alarm was shown to the
 * operators: not into Shelved, Suppressed or OutOfService.
 */
import type { AlarmPriority } from './alarm-schema.js';
import type { AlarmState, AlarmTransition } from './alarm-state.js';
import type { AlarmView } from './alarm-view.js';

/** Length of the windows alarm rates are counted in, ms: 10 minutes. */
export const rateWindowMs = 600_000;
/** More activations than this in one window is a flood (EEMUA 191: 10 per 10 minutes). */
export const floodThreshold = 10;
/** Activations of one alarm within {@link chatterWindowMs} that make it chattering. */
export const chatterCount = 3;
/** The window of chattering, ms: 60 s. */
export const chatterWindowMs = 60_000;
/** An alarm active longer than this is stale, ms: 24 h. */
export const staleAfterMs = 86_400_000;
/**
 * Most windows whose counts {@link AlarmStatistics.perWindow} lists (10,000: about 69 days): a
 * longer period gets the figures without the series, whose size the period alone would set.
 */
export const maxSeriesWindows = 10_000;

/** The figures; see the module comment. */
export interface AlarmStatistics {
  /** The period, ISO 8601 UTC. */
  from: string;
  to: string;
  /** Annunciated activations in the period. */
  activations: number;
  /** Annunciated activations by priority. */
  byPriority: Record<AlarmPriority, number>;
  /** Activations per 10 minutes: over the whole period, and in the busiest 10-minute window. */
  perTenMinutes: { average: number; peak: number; peakWindowStart?: string };
  /**
   * Annunciated activations in each 10-minute window, from the period's start (the console's
   * chart); absent when the period has more than {@link maxSeriesWindows} windows.
   */
  perWindow?: number[];
  /** 10-minute windows of the period (from its start; the last may be partial). */
  windows: number;
  /** Windows with more than 10 activations. */
  floodWindows: number;
  /** Share of the period's windows in flood, 0–1. */
  floodShare: number;
  /** The 10 alarms with the most activations, most first (ties by name). */
  mostFrequent: { name: string; activations: number }[];
  /** Alarms with at least 3 activations within 60 s, with the most seen in one 60 s span. */
  chattering: { name: string; mostIn60s: number }[];
  /** Alarms active for more than 24 h now, oldest first. */
  stale: { name: string; activeSince: string }[];
  /** Shelve actions in the period, and alarms shelved now. */
  shelved: { actions: number; now: number };
}

const overlays: ReadonlySet<AlarmState> = new Set(['Shelved', 'Suppressed', 'OutOfService']);

/**
 * Computes the figures.
 * @param transitions the journal's transitions in the period (any order).
 * @param alarms the alarms' current views (stale alarms and shelved counts).
 */
export function alarmStatistics(
  transitions: readonly AlarmTransition[],
  alarms: readonly AlarmView[],
  fromMs: number,
  toMs: number,
  nowMs: number,
): AlarmStatistics {
  const byPriority: Record<AlarmPriority, number> = { Low: 0, Medium: 0, High: 0, Urgent: 0 };
  const windows = Math.max(1, Math.ceil((toMs - fromMs) / rateWindowMs));
  const perWindow = new Map<number, number>();
  const timesByName = new Map<string, number[]>();
  let activations = 0;
  let shelveActions = 0;
  for (const transition of transitions) {
    if (transition.time < fromMs || transition.time > toMs) continue;
    if (transition.event === 'Shelved') shelveActions++;
    if (transition.event !== 'Activated' || overlays.has(transition.to)) continue;
    activations++;
    byPriority[transition.priority]++;
    const window = Math.min(windows - 1, Math.floor((transition.time - fromMs) / rateWindowMs));
    perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
    const times = timesByName.get(transition.name);
    if (times === undefined) timesByName.set(transition.name, [transition.time]);
    else times.push(transition.time);
  }
  let peak = 0;
  let peakWindow: number | undefined;
  let floodWindows = 0;
  for (const [window, count] of perWindow) {
    if (count > peak || (count === peak && peakWindow !== undefined && window < peakWindow)) {
      peak = count;
      peakWindow = window;
    }
    if (count > floodThreshold) floodWindows++;
  }
  const periodWindows = Math.max((toMs - fromMs) / rateWindowMs, Number.MIN_VALUE);
  const mostFrequent = [...timesByName]
    .map(([name, times]) => ({ name, activations: times.length }))
    .sort((a, b) => b.activations - a.activations || a.name.localeCompare(b.name))
    .slice(0, 10);
  const chattering: { name: string; mostIn60s: number }[] = [];
  for (const [name, times] of timesByName) {
    const most = mostWithin(times, chatterWindowMs);
    if (most >= chatterCount) chattering.push({ name, mostIn60s: most });
  }
  chattering.sort((a, b) => b.mostIn60s - a.mostIn60s || a.name.localeCompare(b.name));
  const stale = alarms
    .filter(
      (alarm) =>
        alarm.active &&
        alarm.activeSince !== undefined &&
        nowMs - Date.parse(alarm.activeSince) > staleAfterMs,
    )
    .map((alarm) => ({ name: alarm.name, activeSince: alarm.activeSince as string }))
    .sort((a, b) => a.activeSince.localeCompare(b.activeSince) || a.name.localeCompare(b.name));
  return {
    from: new Date(fromMs).toISOString(),
    to: new Date(toMs).toISOString(),
    activations,
    byPriority,
    perTenMinutes: {
      average: activations / periodWindows,
      peak,
      ...(peakWindow !== undefined
        ? { peakWindowStart: new Date(fromMs + peakWindow * rateWindowMs).toISOString() }
        : {}),
    },
    ...(windows <= maxSeriesWindows
      ? { perWindow: Array.from({ length: windows }, (_, index) => perWindow.get(index) ?? 0) }
      : {}),
    windows,
    floodWindows,
    floodShare: floodWindows / windows,
    mostFrequent,
    chattering,
    stale,
    shelved: {
      actions: shelveActions,
      now: alarms.filter((alarm) => alarm.shelve !== undefined).length,
    },
  };
}

/** The most of `times` within any span of `spanMs` (inclusive of both ends). */
function mostWithin(times: number[], spanMs: number): number {
  times.sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) > spanMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
