/**
 * "Send test" of a webhook publisher: one batch of the current values of its collections'
 * members, delivered now with the publisher's destination, credentials, signing, gzip and CA,
 * and the receiver's answer reported. It leaves the publisher alone: no counters, no health tags,
 * no outbox, and it works whether the publisher runs or not.
 */
import { resolve } from 'node:path';
import type { Clock } from '../../clock.js';
import type { Collections } from '../../tags/collections.js';
import type { Sample } from '../../tags/sample.js';
import type { TagStore } from '../../tags/tag-store.js';
import type { PublisherTestResult } from '../publisher.js';
import { buildPayload } from '../trigger/payload.js';
import { WebhookDelivery } from './delivery.js';
import type { WebhookConfig } from './schema.js';
import { readCaFile } from './webhook-publisher.js';

/** Most samples a test batch carries: a test shows the answer, it does not move the plant's data. */
export const testBatchLimit = 1_000;

/** What a test delivery reads and how it sends. */
export interface TestDeliveryDeps {
  store: TagStore;
  collections: Collections;
  clock: Clock;
  /** tagd's version, for the User-Agent. */
  version: string;
  /** Folder a relative `caFile` is resolved against. Default: the working directory. */
  baseDir?: string;
}

/** The current samples of the members of `collections` (those that exist), each once, bounded. */
export function testSamples(
  deps: Pick<TestDeliveryDeps, 'store' | 'collections'>,
  collections: readonly string[],
): Sample[] {
  const seen = new Set<string>();
  const samples: Sample[] = [];
  for (const name of collections) {
    if (!deps.collections.has(name)) continue;
    for (const id of deps.collections.members(name)) {
      if (seen.has(id)) continue;
      seen.add(id);
      const sample = deps.store.get(id);
      if (sample !== undefined) samples.push(sample);
      if (samples.length >= testBatchLimit) return samples;
    }
  }
  return samples;
}

/**
 * Delivers one test batch (the JSON array the publisher sends) to the publisher's destination.
 * @throws Error when the caFile cannot be read (the caller answers without its contents).
 */
export async function sendWebhookTest(
  config: WebhookConfig,
  deps: TestDeliveryDeps,
): Promise<PublisherTestResult> {
  const extraCa =
    config.caFile === undefined
      ? undefined
      : await readCaFile(resolve(deps.baseDir ?? process.cwd(), config.caFile));
  const entries = buildPayload(testSamples(deps, config.collections));
  const delivery = new WebhookDelivery(config, {
    clock: deps.clock,
    version: deps.version,
    ...(extraCa !== undefined ? { extraCa } : {}),
  });
  try {
    // One attempt: a person waiting for the answer wants the first one, not the retry rule's.
    // The time is the request's own, measured in real time (the clock runs the publisher's rules).
    const started = performance.now();
    const outcome = await delivery.send(entries, { maxAttempts: 1 });
    const durationMs = Math.round((performance.now() - started) * 10) / 10;
    const last = outcome.failures[outcome.failures.length - 1];
    return {
      ok: outcome.ok,
      ...(outcome.httpStatus !== undefined ? { httpStatus: outcome.httpStatus } : {}),
      attempts: outcome.attempts,
      durationMs,
      samples: entries.length,
      at: new Date(deps.clock.now()).toISOString(),
      ...(!outcome.ok && last !== undefined ? { error: last.error } : {}),
    };
  } finally {
    delivery.close();
  }
}
