/**
 * Reads one MQTT payload as a subscription describes it: the value (plain text, or a JSON
 * document at a JSON Pointer), its timestamp and its quality. A payload that cannot be read is
 * an error of one of a few kinds, counted by the driver; error messages never quote the payload.
 */
import type { Quality, TagValue } from '../../src/tags/sample.js';
import { type ExactJson, JsonSyntaxError, LargeInteger, parseExactJson } from './exact-json.js';
import { parseJsonPointer, resolveJsonPointer } from './json-pointer.js';
import type { MqttDataType, MqttSubscriptionConfig } from './schema.js';

/** Why a payload could not be read; each kind is a status counter of the driver. */
export type PayloadErrorKind =
  | 'payloadTooLarge'
  | 'payloadNotText'
  | 'payloadNotJson'
  | 'valueMissing'
  | 'valueWrongType'
  | 'timestampInvalid'
  | 'qualityInvalid';

/** Every error kind, in the order the counters list them. */
export const payloadErrorKinds: readonly PayloadErrorKind[] = [
  'payloadTooLarge',
  'payloadNotText',
  'payloadNotJson',
  'valueMissing',
  'valueWrongType',
  'timestampInvalid',
  'qualityInvalid',
];

/** Longest string value kept, characters; a longer one is Bad (valueWrongType). */
export const maxStringLength = 4096;

/** What a payload holds. */
export interface PayloadReading {
  ok: true;
  /** The quality the payload states (Good when it states none). */
  quality: Quality;
  /** The value; absent when the payload states Unavailable or Bad without one. */
  value?: TagValue;
  /** The exact digits of an integer beyond ±2^53 (`value` is its nearest double). */
  valueText?: string;
  /** The payload's own timestamp, epoch ms; absent: none read. */
  timestampMs?: number;
}

/** Why a payload could not be read. */
export interface PayloadError {
  ok: false;
  kind: PayloadErrorKind;
  /** For the tag's sample and the log; never quotes the payload. */
  message: string;
}

/** How one subscription reads its payloads, prepared once. */
export interface PayloadReader {
  read(payload: Buffer): PayloadReading | PayloadError;
}

const decimalPattern = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$/;
const integerPattern = /^\s*[-+]?\d+\s*$/;
const isoPattern =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Earliest and latest timestamps taken, epoch ms (years 1970 to 9999). */
const latestTimestamp = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const error = (kind: PayloadErrorKind, message: string): PayloadError => ({
  ok: false,
  kind,
  message,
});

/** Prepares the reader of a subscription. */
export function payloadReader(
  subscription: Pick<
    MqttSubscriptionConfig,
    'format' | 'valuePath' | 'timestampPath' | 'qualityPath' | 'timestampUnit' | 'dataType'
  >,
  maxPayloadBytes: number,
): PayloadReader {
  const { format, dataType } = subscription;
  const json = format !== 'plain';
  const paths =
    format === 'tagd'
      ? { value: '/value', timestamp: '/utcTimestamp', quality: '/quality' }
      : {
          value: subscription.valuePath ?? '',
          timestamp: subscription.timestampPath,
          quality: subscription.qualityPath,
        };
  const valueTokens = parseJsonPointer(paths.value);
  const timestampTokens =
    paths.timestamp !== undefined ? parseJsonPointer(paths.timestamp) : undefined;
  const qualityTokens = paths.quality !== undefined ? parseJsonPointer(paths.quality) : undefined;
  const scale = subscription.timestampUnit === 's' ? 1000 : 1;
  return {
    read(payload) {
      if (payload.length > maxPayloadBytes)
        return error(
          'payloadTooLarge',
          `The payload has ${payload.length} bytes, more than maxPayloadBytes (${maxPayloadBytes}).`,
        );
      let text: string;
      try {
        text = utf8.decode(payload);
      } catch {
        return error('payloadNotText', 'The payload is not UTF-8 text.');
      }
      if (!json) {
        const value = fromText(text, dataType);
        return value.ok ? { ok: true, quality: 'Good', ...value.reading } : value;
      }
      let document: ExactJson;
      try {
        document = parseExactJson(text);
      } catch (caught) {
        const where = caught instanceof JsonSyntaxError ? `: ${caught.message}` : '';
        return error('payloadNotJson', `The payload is not JSON${where}.`);
      }
      let quality: Quality = 'Good';
      if (qualityTokens !== undefined) {
        const stated = resolveJsonPointer(document, qualityTokens);
        const read = readQuality(stated);
        if (read === undefined)
          return error(
            'qualityInvalid',
            stated === undefined
              ? `The payload has no quality at ${paths.quality}.`
              : `The quality at ${paths.quality} is not a quality name, boolean or OPC quality code.`,
          );
        quality = read;
      }
      let timestampMs: number | undefined;
      if (timestampTokens !== undefined) {
        const stated = resolveJsonPointer(document, timestampTokens);
        timestampMs = readTimestamp(stated, scale);
        if (timestampMs === undefined)
          return error(
            'timestampInvalid',
            stated === undefined
              ? `The payload has no timestamp at ${paths.timestamp}.`
              : `The timestamp at ${paths.timestamp} is neither an ISO 8601 date and time with a time zone nor epoch ${scale === 1 ? 'milliseconds' : 'seconds'}.`,
          );
      }
      const stamp = timestampMs !== undefined ? { timestampMs } : {};
      const found = resolveJsonPointer(document, valueTokens);
      // Unavailable and Bad need no value (a tagd entry of such a tag carries none).
      if ((quality === 'Unavailable' || quality === 'Bad') && (found ?? null) === null)
        return { ok: true, quality, ...stamp };
      if (found === undefined || found === null)
        return error(
          'valueMissing',
          found === null
            ? `The value at ${paths.value || 'the document'} is null.`
            : `The payload has no value at ${paths.value}.`,
        );
      const value = fromJson(found, dataType, paths.value);
      if (!value.ok) return value;
      // A Bad or Unavailable source keeps no value: the tag shows the quality only.
      if (quality === 'Unavailable' || quality === 'Bad') return { ok: true, quality, ...stamp };
      return { ok: true, quality, ...value.reading, ...stamp };
    },
  };
}

type ValueResult = { ok: true; reading: { value: TagValue; valueText?: string } } | PayloadError;

const wrongType = (dataType: MqttDataType, where: string): PayloadError =>
  error('valueWrongType', `The value${where} is not a ${dataType}.`);

function fromText(text: string, dataType: MqttDataType): ValueResult {
  if (dataType === 'string') {
    if (text.length > maxStringLength) return tooLong('');
    return { ok: true, reading: { value: text } };
  }
  if (dataType === 'boolean') {
    const flag = booleanOf(text.trim());
    return flag === undefined ? wrongType(dataType, '') : { ok: true, reading: { value: flag } };
  }
  return numberOfText(text, '');
}

function fromJson(found: ExactJson, dataType: MqttDataType, path: string): ValueResult {
  const where = path === '' ? '' : ` at ${path}`;
  if (found instanceof LargeInteger) {
    if (dataType === 'number')
      return { ok: true, reading: { value: found.value, valueText: found.text } };
    if (dataType === 'string') return { ok: true, reading: { value: found.text } };
    return wrongType(dataType, where);
  }
  switch (dataType) {
    case 'number':
      if (typeof found === 'number') return { ok: true, reading: { value: found } };
      if (typeof found === 'string') return numberOfText(found, where);
      return wrongType(dataType, where);
    case 'boolean': {
      const flag =
        typeof found === 'boolean'
          ? found
          : typeof found === 'number' || typeof found === 'string'
            ? booleanOf(String(found))
            : undefined;
      return flag === undefined
        ? wrongType(dataType, where)
        : { ok: true, reading: { value: flag } };
    }
    case 'string':
      if (typeof found === 'string')
        return found.length > maxStringLength
          ? tooLong(where)
          : { ok: true, reading: { value: found } };
      if (typeof found === 'number' || typeof found === 'boolean')
        return { ok: true, reading: { value: String(found) } };
      return wrongType(dataType, where);
  }
}

function tooLong(where: string): PayloadError {
  return error(
    'valueWrongType',
    `The string value${where} is longer than ${maxStringLength} characters.`,
  );
}

/** A number from decimal text; an integer beyond ±2^53 keeps its digits. */
function numberOfText(text: string, where: string): ValueResult {
  if (!decimalPattern.test(text)) return wrongType('number', where);
  const value = Number(text);
  if (!Number.isFinite(value)) return wrongType('number', where);
  if (integerPattern.test(text) && !Number.isSafeInteger(value)) {
    return { ok: true, reading: { value, valueText: BigInt(text.trim()).toString() } };
  }
  return { ok: true, reading: { value } };
}

function booleanOf(text: string): boolean | undefined {
  const lower = text.toLowerCase();
  if (lower === 'true' || lower === '1') return true;
  if (lower === 'false' || lower === '0') return false;
  return undefined;
}

/**
 * A stated quality: a name (case-insensitive; Uncertain is Stale), a boolean (true Good, false
 * Bad), or an OPC DA quality code as Sparkplug uses (192–255 Good, 64–191 Uncertain, 0–63 Bad).
 */
function readQuality(stated: ExactJson | undefined): Quality | undefined {
  if (typeof stated === 'boolean') return stated ? 'Good' : 'Bad';
  if (typeof stated === 'number') {
    if (!Number.isInteger(stated) || stated < 0 || stated > 255) return undefined;
    return stated >= 192 ? 'Good' : stated >= 64 ? 'Stale' : 'Bad';
  }
  if (typeof stated !== 'string') return undefined;
  switch (stated.toLowerCase()) {
    case 'good':
      return 'Good';
    case 'stale':
    case 'uncertain':
      return 'Stale';
    case 'bad':
      return 'Bad';
    case 'unavailable':
      return 'Unavailable';
    default:
      return undefined;
  }
}

function readTimestamp(stated: ExactJson | undefined, scale: number): number | undefined {
  let ms: number;
  if (typeof stated === 'number') ms = stated * scale;
  else if (typeof stated === 'string' && isoPattern.test(stated))
    ms = Date.parse(stated.replace(',', '.'));
  else return undefined;
  if (!Number.isFinite(ms) || ms < 0 || ms > latestTimestamp) return undefined;
  return Math.round(ms);
}
