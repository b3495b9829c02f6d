/**
 * The messages of the two JSON formats, built from one batch of samples:
 * - `json`: one message per collection, topic `<topicPrefix>/<collection>`, payload the
 *   webhook's JSON array of entries of that collection's tags in the batch;
 * - `json-per-tag`: one message per entry, topic `<topicPrefix>/<fullTagId>`, payload the entry.
 * Entries are the webhook's (`trigger/payload.ts`): numbers, and quality without value for
 * Unavailable and Bad; other samples are left out.
 */
import type { Sample } from '../../tags/sample.js';
import { buildPayload, toPayloadEntry } from '../trigger/payload.js';

/** One MQTT message to publish. */
export interface OutgoingMessage {
  topic: string;
  payload: string | Buffer;
  /** Entries (json) or metrics (Sparkplug) it carries, for the counters. */
  samples: number;
}

/**
 * `json`: one message per collection that has entries in the batch.
 * @param collections the publisher's collections, in configuration order.
 * @param memberOf which of them each tag belongs to; absent with one collection (every tag of
 *   the batch belongs to it).
 */
export function collectionMessages(
  samples: readonly Sample[],
  topicPrefix: string,
  collections: readonly string[],
  memberOf: ReadonlyMap<string, readonly string[]> | undefined,
): OutgoingMessage[] {
  if (memberOf === undefined || collections.length === 1) {
    const entries = buildPayload(samples);
    if (entries.length === 0) return [];
    const topic = `${topicPrefix}/${collections[0]}`;
    return [{ topic, payload: JSON.stringify(entries), samples: entries.length }];
  }
  const grouped = new Map<string, Sample[]>();
  for (const sample of samples) {
    for (const collection of memberOf.get(sample.fullTagId) ?? []) {
      let group = grouped.get(collection);
      if (group === undefined) {
        group = [];
        grouped.set(collection, group);
      }
      group.push(sample);
    }
  }
  const messages: OutgoingMessage[] = [];
  for (const collection of collections) {
    const group = grouped.get(collection);
    if (group === undefined) continue;
    const entries = buildPayload(group);
    if (entries.length === 0) continue;
    messages.push({
      topic: `${topicPrefix}/${collection}`,
      payload: JSON.stringify(entries),
      samples: entries.length,
    });
  }
  return messages;
}

/** `json-per-tag`: one message per sample that yields an entry. */
export function tagMessages(samples: readonly Sample[], topicPrefix: string): OutgoingMessage[] {
  const messages: OutgoingMessage[] = [];
  for (let i = 0; i < samples.length; i++) {
    const entry = toPayloadEntry(samples[i] as Sample);
    if (entry === undefined) continue;
    messages.push({
      topic: `${topicPrefix}/${entry.fullTagId}`,
      payload: JSON.stringify(entry),
      samples: 1,
    });
  }
  return messages;
}
