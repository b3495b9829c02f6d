/**
 * The latest local value of one DBC signal, as `GET /api/v2/DBC/{component}/{message}/{signal}`
 * and the assistant's DBC tool answer it: the signal's tag sample with the DBC's unit, and the
 * label, raw value and exact digits a CAN driver attached.
 */
import type { DbcSignalCatalog } from './dbc-signal-catalog.js';
import type { Quality, TagValue } from './sample.js';
import type { TagStore } from './tag-store.js';

/** One signal's latest value (the API's `DbcSignal`). */
export interface DbcSignalReading {
  component: string;
  message: string;
  signal: string;
  /** `<component>/<message>/<signal>`. */
  fullTagId: string;
  /** When decoded, ISO 8601 UTC; for a signal never received, the time of the answer. */
  utcTimestamp: string;
  quality: Quality;
  /** Physical value; absent for Unavailable and Bad. */
  value?: TagValue;
  unit?: string;
  valueText?: string;
  raw?: number;
  rawText?: string;
}

/**
 * Reads one signal.
 * @param nowMs epoch ms, the timestamp of a signal never received.
 * @throws NotFoundError naming the missing level (component, message or signal).
 */
export function readDbcSignal(
  catalog: DbcSignalCatalog,
  store: TagStore,
  nowMs: number,
  component: string,
  message: string,
  signalName: string,
): DbcSignalReading {
  const { signal, fullTagId } = catalog.require(component, message, signalName);
  const sample = store.get(fullTagId);
  const unit = nonEmpty(signal.unit) ?? nonEmpty(sample?.metadata?.unit);
  const base = { component, message, signal: signalName, fullTagId };
  if (sample === undefined || sample.quality === 'Unavailable') {
    return {
      ...base,
      utcTimestamp: sample?.utcTimestamp ?? new Date(nowMs).toISOString(),
      quality: 'Unavailable',
      ...(unit !== undefined ? { unit } : {}),
    };
  }
  // `raw` and `rawText` are not part of SampleMetadata: a CAN driver may carry them there.
  const { raw, rawText } = (sample.metadata ?? {}) as { raw?: unknown; rawText?: unknown };
  const valueText = sample.metadata?.valueText;
  const hasValue = sample.value !== undefined;
  return {
    ...base,
    utcTimestamp: sample.utcTimestamp,
    quality: sample.quality,
    ...(hasValue ? { value: sample.value } : {}),
    ...(unit !== undefined ? { unit } : {}),
    ...(hasValue && typeof valueText === 'string' ? { valueText } : {}),
    ...(hasValue && typeof raw === 'number' && Number.isFinite(raw) ? { raw } : {}),
    ...(hasValue && typeof rawText === 'string' ? { rawText } : {}),
  };
}

function nonEmpty(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}
