/**
 * Samples a Sparkplug publisher keeps in its durable outbox while its primary host is offline
 * or the broker unreachable. They are stored as samples, not as encoded DDATA: `seq` and the
 * births they would refer to belong to a session that is over by the time they are sent, so
 * they are encoded only when forwarded (after the new births). One outbox message holds up to
 * {@link storedSamplesPerMessage} samples as a compact JSON array of
 * `[fullTagId, utcTimestamp, quality, value?]`.
 */
import { type Quality, qualities, type Sample } from '../../tags/sample.js';

/** The label (outbox topic) of a message of stored Sparkplug samples. */
export const storedSamplesTopic = 'sparkplug-samples';
/** Most samples in one outbox message: the bound is dropped whole, so it stays fine-grained. */
export const storedSamplesPerMessage = 500;

type Row = [string, string, Quality] | [string, string, Quality, Sample['value']];

/** Outbox entries holding the samples, in order. */
export function storedEntries(
  samples: readonly Sample[],
): { topic: string; payload: string; samples: number }[] {
  const entries: { topic: string; payload: string; samples: number }[] = [];
  for (let start = 0; start < samples.length; start += storedSamplesPerMessage) {
    const rows: Row[] = [];
    for (const sample of samples.slice(start, start + storedSamplesPerMessage)) {
      rows.push(
        sample.value === undefined
          ? [sample.fullTagId, sample.utcTimestamp, sample.quality]
          : [sample.fullTagId, sample.utcTimestamp, sample.quality, sample.value],
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
export function storedSamplesOf(topic: string, payload: Buffer): Sample[] | undefined {
  if (topic !== storedSamplesTopic) return undefined;
  let rows: unknown;
  try {
    rows = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(rows)) return undefined;
  const samples: Sample[] = [];
  for (const row of rows) {
    if (!Array.isArray(row)) return undefined;
    const [fullTagId, utcTimestamp, quality, value] = row as unknown[];
    if (typeof fullTagId !== 'string' || typeof utcTimestamp !== 'string') return undefined;
    if (!qualities.includes(quality as Quality)) return undefined;
    const sample: Sample = { fullTagId, utcTimestamp, quality: quality as Quality };
    if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
      sample.value = value;
    }
    samples.push(sample);
  }
  return samples;
}
