/**
 * Samples a Sparkplug publisher keeps in its durable outbox while its primary host is offline
 * or the broker unreachable. They are stored as samples, not as encoded DDATA: `seq` and the
 * births they would refer to belong to a session that is over by the time they are sent, so
 * they are encoded only when forwarded (after the new births). One outbox message holds up to
 * {@link storedSamplesPerMessage} samples as a compact JSON array of
 * `[fullTagId, timestamp (epoch ms), quality, value?]`: the timestamp is parsed once, when
 * stored, not when a catch-up has to be fast.
 */
import { type Quality, qualities, type Sample, type TagValue } from '../../tags/sample.js';

/** The label (outbox topic) of a message of stored Sparkplug samples. */
export const storedSamplesTopic = 'sparkplug-samples';
/** Most samples in one outbox message: the bound is dropped whole, so it stays fine-grained. */
export const storedSamplesPerMessage = 500;

/** A stored sample as read back: its tag, timestamp, quality and value. */
export interface StoredSample {
  fullTagId: string;
  /** When the value was read, epoch ms. */
  timestamp: number;
  quality: Quality;
  value?: TagValue;
}

type Row = [string, number, Quality] | [string, number, Quality, TagValue];

/** Outbox entries holding the samples, in order. */
export function storedEntries(
  samples: readonly Sample[],
): { topic: string; payload: string; samples: number }[] {
  const entries: { topic: string; payload: string; samples: number }[] = [];
  for (let start = 0; start < samples.length; start += storedSamplesPerMessage) {
    const rows: Row[] = [];
    for (const sample of samples.slice(start, start + storedSamplesPerMessage)) {
      const timestamp = Date.parse(sample.utcTimestamp);
      rows.push(
        sample.value === undefined
          ? [sample.fullTagId, timestamp, sample.quality]
          : [sample.fullTagId, timestamp, sample.quality, sample.value],
      );
    }
    entries.push({
      topic: storedSamplesTopic,
      payload: JSON.stringify(rows),
      samples: rows.length,
    });
  }
  return entries;
}

/**
 * The samples of an outbox message, in order; undefined when it is not one of stored samples
 * (another format's message, or a damaged one).
 */
export function storedSamplesOf(topic: string, payload: Buffer): StoredSample[] | undefined {
  if (topic !== storedSamplesTopic) return undefined;
  let rows: unknown;
  try {
    rows = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows)) return undefined;
  const samples: StoredSample[] = [];
  for (const row of rows) {
    if (!Array.isArray(row)) return undefined;
    const [fullTagId, timestamp, quality, value] = row as unknown[];
    if (typeof fullTagId !== 'string' || typeof timestamp !== 'number') return undefined;
    if (!qualities.includes(quality as Quality)) return undefined;
    const sample: StoredSample = { fullTagId, timestamp, quality: quality as Quality };
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
      sample.value = value;
    }
    samples.push(sample);
  }
  return samples;
}
