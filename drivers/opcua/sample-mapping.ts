/**
 * One OPC UA DataValue → one tag sample: the StatusCode becomes the quality, the Variant the
 * value. The choices, also in docs/drivers-opcua.md:
 * - Good → Good. Uncertain → Good as well (the server still vouches for a usable value), with the
 *   status name in the sample's metadata (`statusCode`), so a client can tell.
 * - BadWaitingForInitialData → Unavailable (NeverRead); BadNoCommunication, BadNotConnected,
 *   BadServerNotConnected, BadCommunicationError → Unavailable (Disconnected): the server has
 *   lost the device behind the variable. BadTimeout → Bad (Timeout). BadDecodingError,
 *   BadTypeMismatch, BadDataEncodingInvalid → Bad (DecodeError). Any other Bad status (e.g.
 *   BadNodeIdUnknown, BadNotReadable, BadUserAccessDenied) → Bad (DeviceException) with the
 *   status name in the message.
 * - Values: every numeric type, Boolean,
 *   String, LocalizedText (its text), DateTime (ISO 8601), Guid, NodeId, QualifiedName and
 *   StatusCode (as text). NaN and infinities → Bad (DecodeError). Arrays, matrices, ByteString,
 *   XmlElement, ExtensionObject and an empty Variant → Bad (DecodeError): tags are scalars.
 * - Int64 and UInt64: the value is the nearest double; beyond ±2^53, where a double no longer
 *   holds every integer, the exact decimal is also in `metadata.valueText`, so a client that
 *   needs all 64 bits (a counter, an identifier) still has them.
 */
import { DataType, type DataValue, VariantArrayType } from 'node-opcua';
import type { QualityReason, Sample, SampleMetadata, TagValue } from '../../src/tags/sample.js';

/** Sample metadata of an OPC UA tag. */
export interface OpcuaSampleMetadata extends SampleMetadata {
  /** Name of a status other than Good, e.g. `UncertainLastUsableValue`. */
  statusCode?: string;
  /**
   * The exact decimal of an Int64 or UInt64 beyond ±2^53 (e.g. `9007199254740993`), whose
   * `value` is only the nearest double. Absent otherwise.
   */
  valueText?: string;
}

/** What the mapping needs of a tag. */
export interface MappedTag {
  fullTagId: string;
  /** Unit, description and `source`: copied into every sample. */
  metadata: SampleMetadata | undefined;
}

const unavailable: Record<string, 'NeverRead' | 'Disconnected'> = {
  BadWaitingForInitialData: 'NeverRead',
  BadNoCommunication: 'Disconnected',
  BadNotConnected: 'Disconnected',
  BadServerNotConnected: 'Disconnected',
  BadCommunicationError: 'Disconnected',
};

const badReasons: Record<string, QualityReason> = {
  BadTimeout: 'Timeout',
  BadDecodingError: 'DecodeError',
  BadTypeMismatch: 'DecodeError',
  BadDataEncodingInvalid: 'DecodeError',
};

/** The name of a status without its info bits (`Good#Overflow` → `Good`). */
export function statusName(name: string): string {
  const hash = name.indexOf('#');
  return hash < 0 ? name : name.slice(0, hash);
}

/**
 * The sample for the status of a variable that has no value: a Bad or unreadable status (a
 * failed monitored item, a notification with a Bad status).
 */
export function statusSample(
  tag: MappedTag,
  name: string,
  code: number,
  utcTimestamp: string,
): Sample {
  const base = statusName(name);
  const hex = `0x${(code >>> 0).toString(16).toUpperCase().padStart(8, '0')}`;
  const gone = unavailable[base];
  const sample: Sample =
    gone !== undefined
      ? {
          fullTagId: tag.fullTagId,
          utcTimestamp,
          quality: 'Unavailable',
          reason: gone,
          message: `The server reports ${base} (${hex}).`,
        }
      : {
          fullTagId: tag.fullTagId,
          utcTimestamp,
          quality: 'Bad',
          reason: badReasons[base] ?? 'DeviceException',
          message: `The server reports ${base} (${hex}).`,
        };
  if (tag.metadata) sample.metadata = tag.metadata;
  return sample;
}

/**
 * Formats sample times, remembering the last one: the values of one notification message mostly
 * share their timestamp to the millisecond, and formatting it once instead of once per value is
 * a good part of the mapping's cost. One per driver, so drivers share no state.
 */
export class SampleTimes {
  private lastTime = Number.NaN;
  private lastIso = '';

  /** `time` (epoch ms) as ISO 8601 UTC with milliseconds. */
  iso(time: number): string {
    if (time !== this.lastTime) {
      this.lastTime = time;
      this.lastIso = new Date(time).toISOString();
    }
    return this.lastIso;
  }
}

/**
 * Maps one DataValue of a tag's monitored item to a sample. `times` is the caller's
 * {@link SampleTimes}; without it every time is formatted afresh.
 */
export function dataValueSample(
  tag: MappedTag,
  dataValue: DataValue,
  nowMs: number,
  times?: SampleTimes,
): Sample {
  const time =
    dataValue.sourceTimestamp?.getTime() ?? dataValue.serverTimestamp?.getTime() ?? Number.NaN;
  const ms = Number.isFinite(time) ? time : nowMs;
  const utcTimestamp = times ? times.iso(ms) : new Date(ms).toISOString();
  const status = dataValue.statusCode;
  const code = status.value >>> 0;
  // The two top bits are the severity: 00 Good, 01 Uncertain, 1x Bad.
  const severity = code >>> 30;
  if (severity >= 2) return statusSample(tag, status.name, code, utcTimestamp);
  const converted = variantValue(dataValue);
  if (typeof converted === 'object' && 'problem' in converted) {
    const sample: Sample = {
      fullTagId: tag.fullTagId,
      utcTimestamp,
      quality: 'Bad',
      reason: 'DecodeError',
      message: converted.problem,
    };
    if (tag.metadata) sample.metadata = tag.metadata;
    return sample;
  }
  const wide = typeof converted === 'object';
  const sample: Sample = {
    fullTagId: tag.fullTagId,
    utcTimestamp,
    quality: 'Good',
    value: wide ? converted.value : converted,
  };
  if (severity === 1 || wide) {
    // A copy: the tag's metadata object is shared by all its samples.
    const metadata: OpcuaSampleMetadata = { ...tag.metadata };
    if (severity === 1) metadata.statusCode = statusName(status.name);
    if (wide) metadata.valueText = converted.valueText;
    sample.metadata = metadata;
  } else if (tag.metadata) sample.metadata = tag.metadata;
  return sample;
}

/** A 64-bit integer a double cannot hold exactly: its nearest double and its exact decimal. */
interface WideInteger {
  value: number;
  valueText: string;
}

/** Largest magnitude up to which a double holds every integer. */
const exactLimit = 2n ** 53n;

/** A variant's value as a tag value, or why it cannot be one. */
function variantValue(dataValue: DataValue): TagValue | WideInteger | { problem: string } {
  const variant = dataValue.value;
  if (variant === undefined || variant === null || variant.dataType === DataType.Null) {
    return { problem: 'The server sent no value.' };
  }
  if (variant.arrayType !== VariantArrayType.Scalar) {
    return {
      problem: `The variable holds an array of ${DataType[variant.dataType]}; tags hold scalars only.`,
    };
  }
  const value: unknown = variant.value;
  switch (variant.dataType) {
    case DataType.Boolean:
      return Boolean(value);
    case DataType.SByte:
    case DataType.Byte:
    case DataType.Int16:
    case DataType.UInt16:
    case DataType.Int32:
    case DataType.UInt32:
    case DataType.Float:
    case DataType.Double:
      return finite(value as number);
    case DataType.Int64:
    case DataType.UInt64: {
      const exact = int64(value, variant.dataType === DataType.Int64);
      if (typeof exact === 'number') return finite(exact);
      const nearest = Number(exact);
      return exact > exactLimit || exact < -exactLimit
        ? { value: nearest, valueText: exact.toString() }
        : nearest;
    }
    case DataType.String:
      return typeof value === 'string' ? value : { problem: 'The server sent a null string.' };
    case DataType.DateTime: {
      const time = value instanceof Date ? value.getTime() : Number.NaN;
      return Number.isFinite(time)
        ? new Date(time).toISOString()
        : { problem: 'The server sent an invalid DateTime.' };
    }
    case DataType.LocalizedText: {
      const text = (value as { text?: string | null } | null)?.text;
      return typeof text === 'string' ? text : '';
    }
    case DataType.Guid:
    case DataType.NodeId:
    case DataType.ExpandedNodeId:
    case DataType.QualifiedName:
      return value === null || value === undefined ? '' : String(value);
    case DataType.StatusCode:
      return statusName((value as { name: string }).name);
    default:
      return {
        problem: `Values of type ${DataType[variant.dataType]} cannot be a tag value.`,
      };
  }
}

function finite(value: number): number | { problem: string } {
  return Number.isFinite(value) ? value : { problem: 'The variable holds NaN or an infinity.' };
}

/**
 * node-opcua carries a 64-bit integer as [high, low] 32-bit words: the exact integer. A plain
 * number (never seen from node-opcua 2.182, accepted anyway) is returned as it is.
 */
function int64(value: unknown, signed: boolean): bigint | number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return value;
  const [high, low] = value as [number, number];
  const highWord = signed ? high | 0 : high >>> 0;
  // Exact whenever the result is a safe integer (the common case, no BigInt needed).
  const number = highWord * 2 ** 32 + (low >>> 0);
  if (Number.isSafeInteger(number)) return number;
  return (BigInt(highWord) << 32n) + BigInt(low >>> 0);
}
