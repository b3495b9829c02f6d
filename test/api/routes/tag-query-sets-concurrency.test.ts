/**
 * Concurrent TagQuerySet requests through the real API (issue 10 item 4, review): one Viewer
 * firing 50 creates of 100,000 values at once, and a second Viewer 10, must not make the daemon
 * build 60 answers of 11 MB together. In a file of its own: the process's heap is measured, so
 * no other test may run beside it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import test from 'ava';
import type { Sample } from '../../../src/tags/sample.js';
import { startApi } from '../../helpers/api-harness.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const mib = 2 ** 20;

function tags(count: number): Sample[] {
  const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
  return Array.from({ length: count }, (_, i) => ({
    fullTagId: `Small/S/T${i}`,
    utcTimestamp: at,
    quality: 'Good' as const,
    value: i,
  }));
}

test('parallel creates beyond 2 per account and 4 in all answer 429 query-capacity-reached; the admitted ones answer in full; the heap stays bounded', async (t) => {
  const api = await startApi(t);
  api.store.write(tags(100));
  const viewers = [
    await api.serviceToken('viewer1', ['Viewers']),
    await api.serviceToken('viewer2', ['Viewers']),
  ];
  // 1,000 `**` bindings over 100 tags: 100,000 values, an answer of some 11 MB.
  const everything = Array.from({ length: 1_000 }, () => ({ source: '**', store: 'Local' }));
  const body = JSON.stringify({ bindings: everything });
  let answersChecked = 0;
  const post = async (token: string) => {
    const response = await fetch(`${api.baseUrl}/api/v2/TagQuerySet`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body,
    });
    const parsed = JSON.parse(await response.text()) as Record<string, unknown>;
    if (response.status === 200) {
      // Checked here and dropped, so that the client keeps no more answers than the server.
      const values = parsed.values as { fullTagId: string; value: number; binding: number }[];
      t.is(typeof parsed.srcSetId, 'string');
      t.is(values.length, 100_000);
      for (const index of [0, 1, 99, 100, 54_321, 99_999]) {
        const value = values[index];
        t.is(value?.binding, Math.floor(index / 100));
        t.is(value?.fullTagId, `Small/S/T${index % 100}`);
        t.is(value?.value, index % 100);
      }
      answersChecked++;
      return { status: 200, headers: response.headers, problem: undefined };
    }
    return { status: response.status, headers: response.headers, problem: parsed };
  };
  // Warm up (code compiled, buffers sized) before the baseline.
  t.is((await post(viewers[0] as string)).status, 200);
  gc();
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);

  const [first, second] = await Promise.all([
    Promise.all(Array.from({ length: 50 }, () => post(viewers[0] as string))),
    Promise.all(Array.from({ length: 10 }, () => post(viewers[1] as string))),
  ]);
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().heapUsed);

  const all = [...(first ?? []), ...(second ?? [])];
  const admitted = (list: typeof all) => list.filter((r) => r.status === 200).length;
  const growth = (peak - baseline) / mib;
  t.log(`${admitted(all)} of 60 admitted, peak heap +${growth.toFixed(1)} MiB`);
  const problemText =
    /^(This account has 2 TagQuerySet requests in progress, the most one account may have at once \(2\)|The gateway is answering 4 TagQuerySet requests, the most it runs at once \(4 for all accounts together\))/;
  for (const response of all) {
    if (response.status === 200) continue;
    t.is(response.status, 429);
    t.is(response.headers.get('content-type'), 'application/problem+json');
    t.is(response.headers.get('retry-after'), '1');
    t.like(response.problem, { status: 429, code: 'query-capacity-reached' });
    t.regex(response.problem?.detail as string, problemText);
  }
  // The first two of each account get in (4 in all); most of the burst does not.
  t.true(admitted(first ?? []) >= 2, `viewer1: ${admitted(first ?? [])} admitted`);
  t.true(admitted(second ?? []) >= 1, `viewer2: ${admitted(second ?? [])} admitted`);
  t.true(admitted(all) < 30, `${admitted(all)} of 60 admitted`);
  t.is(answersChecked, admitted(all) + 1);

  // At most 4 answers are built and written at once (each some 11 MB of text plus its pieces),
  // and the client parses a few: some 150 MiB with garbage. Unbounded, the 60 answers overlap
  // and hold well over 600 MiB.
  t.true(growth < 400, `peak heap grew by ${growth.toFixed(1)} MiB`);

  // Every slot is free again: the next request of each account is admitted.
  for (const token of viewers) t.is((await post(token)).status, 200);
});
