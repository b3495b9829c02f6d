/**
 * The series of the Assistant page's small history chart: from a queryHistory answer, the tag
 * with the most numeric values (the first such tag on a tie), its points sorted by time. Not
 * simply the answer's first tag: a slow one (a valve changing every ten seconds) would hide the
 * chart while a busy one had plenty to draw. A point whose quality is not Good (or absent) is a
 * gap (null), as on the Trends page: no line through a time the device sent nothing trustworthy.
 */

/** One value of a queryHistory answer, as the page receives it (untrusted shape). */
export interface SketchSample {
  fullTagId?: string;
  utcTimestamp?: string;
  quality?: string;
  value?: unknown;
}

/** What the chart draws. */
export interface SketchSeries {
  /** The tag drawn. */
  tag: string | undefined;
  /** Epoch seconds (uPlot's unit), ascending. */
  times: number[];
  /** The values at `times`; null where the quality is not Good (or absent). */
  values: (number | null)[];
}

/** The busiest numeric tag of `samples`, or undefined when no tag has two numeric values. */
export function historySketch(samples: readonly SketchSample[]): SketchSeries | undefined {
  const numeric = samples.filter(
    (sample) =>
      typeof sample.value === 'number' && Number.isFinite(Date.parse(String(sample.utcTimestamp))),
  );
  const counts = new Map<string | undefined, number>();
  for (const sample of numeric)
    counts.set(sample.fullTagId, (counts.get(sample.fullTagId) ?? 0) + 1);
  let tag: string | undefined;
  let most = 0;
  for (const [candidate, count] of counts) {
    if (count > most) {
      tag = candidate;
      most = count;
    }
  }
  if (most < 2) return undefined;
  const points = numeric
    .filter((sample) => sample.fullTagId === tag)
    .map((sample) => ({
      time: Date.parse(String(sample.utcTimestamp)) / 1000,
      value: sample.quality === 'Good' ? (sample.value as number) : null,
    }))
    .sort((a, b) => a.time - b.time);
  return {
    tag,
    times: points.map((point) => point.time),
    values: points.map((point) => point.value),
  };
}
