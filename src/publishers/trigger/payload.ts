/**
 * The entries every publisher sends (spec §6 "Webhook publish"): `{ fullTagId, utcTimestamp,
 * quality, value? }`, built from tag samples. The webhook body and the MQTT `json` payload are
 * one JSON array of them; the MQTT `json-per-tag` payload is one of them.
 */
import type { Quality, Sample } from '../../tags/sample.js';

/** One entry of a webhook body. `reason`, `message` and `metadata` are never sent (spec §6). */
export interface PayloadEntry {
  /** Path of the tag. */
  fullTagId: string;
  /** When the value was read, ISO 8601 UTC. */
  utcTimestamp: string;
  quality: Quality;
  /** A finite number; absent for Unavailable and Bad. */
  value?: number;
}

/**
 * True when a sample yields an entry: Unavailable and Bad always do (quality only); Good and
 * Stale only when they hold a finite number (spec §6: "Only tags holding a finite number are
 * included"), so a string, boolean, NaN or infinite value leaves the tag out of the batch.
 */
export function isPublishable(sample: Sample): boolean {
  const quality = sample.quality;
  if (quality === 'Unavailable' || quality === 'Bad') return true;
  const value = sample.value;
  return typeof value === 'number' && Number.isFinite(value);
}

/**
 * The entry of one sample, or undefined when the sample is left out (see {@link isPublishable}).
 * A Stale entry keeps its last value; Unavailable and Bad entries carry no value even when the
 * sample has one.
 */
export function toPayloadEntry(sample: Sample): PayloadEntry | undefined {
  const quality = sample.quality;
  if (quality === 'Unavailable' || quality === 'Bad') {
    return { fullTagId: sample.fullTagId, utcTimestamp: sample.utcTimestamp, quality };
  }
  const value = sample.value;
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return { fullTagId: sample.fullTagId, utcTimestamp: sample.utcTimestamp, quality, value };
}

/**
 * The entries of a batch, in sample order, leaving out the samples that yield none. Linear, one
 * small object per entry; the caller serializes the whole array once.
 */
export function buildPayload(samples: readonly Sample[]): PayloadEntry[] {
  const entries: PayloadEntry[] = [];
  for (let i = 0; i < samples.length; i++) {
    const entry = toPayloadEntry(samples[i] as Sample);
    if (entry !== undefined) entries.push(entry);
  }
  return entries;
}
