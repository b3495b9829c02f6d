import type { Sample } from '../../src/tags/sample.js';

/**
 * Reads `path` through the REST API of the tagd at `url` (`GET /api/v2/Tags/Sample/<path>`)
 * until `accept` takes its sample, and answers that sample: for a tagd in another process,
 * whose changes cannot be awaited. Every 50 ms (pacing only: each answer is awaited); bounded
 * by the test's own timeout.
 */
export async function sampleWhen(
  url: string,
  token: string,
  path: string,
  accept: (sample: Sample) => boolean,
): Promise<Sample> {
  for (;;) {
    const response = await fetch(`${url}/api/v2/Tags/Sample/${path}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const sample = (await response.json()) as Sample;
    if (response.status === 200 && accept(sample)) return sample;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
