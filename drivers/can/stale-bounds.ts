/**
 * How long a CAN signal may go without a frame before it turns Stale. A signal of a cyclic
 * message (DBC GenMsgCycleTime) comes with every frame, so three cycles without one is a
 * silence. A multiplexed signal comes only in the frames whose multiplexer (switch) selects it:
 * the sender goes through the switch's values in turns, so the signal comes at least once per
 * round of those values, and its bound is the message's scaled by the length of a round.
 *
 * The round is the number of distinct switch values the DBC defines for that switch (every
 * value of every range of the signals it selects, `m3` or SG_MUL_VAL_): the DBC says which
 * values exist, not in which order or how often each is sent, so the bound assumes each is
 * sent once per round. For a cascade (a switch that is itself multiplexed) the rounds multiply
 * along the chain. A message without a cycle time uses the profile's `staleAfterMs`.
 */
import type { DbcMessage, DbcSignal } from '../../src/dbc/model.js';

/** Cycles of its message a signal may miss before it turns Stale. */
export const missedCycles = 3;

/**
 * The distinct values the DBC defines for the switch `switchName` of `message`: the size of the
 * union of the ranges of every signal that switch selects (overlaps counted once).
 */
export function switchValueCount(message: DbcMessage, switchName: string): number {
  const ranges: [number, number][] = [];
  for (const signal of message.signals) {
    const condition = signal.multiplexedBy;
    if (condition?.switchName !== switchName) continue;
    for (const [low, high] of condition.ranges) ranges.push([low, high]);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  let count = 0;
  let end = Number.NEGATIVE_INFINITY;
  for (const [low, high] of ranges) {
    const from = Math.max(low, end + 1);
    if (high >= from) count += high - from + 1;
    end = Math.max(end, high);
  }
  return count;
}

/**
 * Frames of its message in which `signal` comes at least once: 1 for a signal in every frame,
 * the product of the switch value counts along its chain of switches for a multiplexed one.
 * Undefined when a switch is missing or the chain loops (the parser refuses both).
 */
export function framesPerAppearance(message: DbcMessage, signal: DbcSignal): number | undefined {
  let frames = 1;
  const seen = new Set<string>();
  let current: DbcSignal | undefined = signal;
  while (current?.multiplexedBy !== undefined) {
    const switchName: string = current.multiplexedBy.switchName;
    if (seen.has(switchName)) return undefined;
    seen.add(switchName);
    frames *= switchValueCount(message, switchName);
    current = message.signals.find((candidate) => candidate.name === switchName);
    if (current === undefined) return undefined;
  }
  return frames;
}

/**
 * The staleness bound of a signal, ms: {@link missedCycles} × GenMsgCycleTime ×
 * {@link framesPerAppearance} for a message with a cycle time, else `fallbackMs` (the profile's
 * `staleAfterMs`; undefined: never Stale).
 */
export function signalStaleAfterMs(
  message: DbcMessage,
  signal: DbcSignal,
  fallbackMs: number | undefined,
): number | undefined {
  if (message.cycleTimeMs === undefined) return fallbackMs;
  const frames = framesPerAppearance(message, signal);
  return frames === undefined || frames === 0
    ? fallbackMs
    : missedCycles * message.cycleTimeMs * frames;
}
