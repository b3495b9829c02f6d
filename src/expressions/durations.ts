/**
 * Durations as window and unit arguments write them: a number and a unit, `500ms`, `30s`, `5m`,
 * `1h`, `1d`.
 */

/** Milliseconds per unit. */
export const unitMs: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The duration in ms, or undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (match === null) return undefined;
  const ms = Number(match[1]) * (unitMs[match[2] as string] as number);
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}
