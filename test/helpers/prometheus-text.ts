/**
 * Reads series out of a Prometheus text exposition, for tests: `seriesValue(body, 'name', { a: 'b' })`
 * finds the sample whose name is exactly `name` and whose labels include those given.
 */

/** One sample line: name, labels, value. */
export interface ExposedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of an exposition (comments skipped). */
export function parseExposition(body: string): ExposedSample[] {
  const samples: ExposedSample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, '$1');
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The samples named `name` whose labels include `labels`. */
export function samplesOf(
  body: string,
  name: string,
  labels: Record<string, string> = {},
): ExposedSample[] {
  return parseExposition(body).filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The value of the one sample named `name` with `labels`; undefined when there is none. */
export function seriesValue(
  body: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samplesOf(body, name, labels);
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match`);
  return found[0]?.value;
}
