/**
 * One OPC UA DataValue → one tag sample: the StatusCode becomes the quality, the Variant the
 * value. The choices, also in the README:
 * - Good → Good. Uncertain → Good as well (the server still vouches for a usable value), with the
 *   status name in the sample's metadata (`statusCode`), so a client can tell.
 * - BadWaitingForInitialData → Unavailable (NeverRead); BadNoCommunication, BadNotConnected,
 *   BadServerNotConnected, BadCommunicationError → Unavailable (Disconnected): the server has
 *   lost the device behind the variable. BadTimeout → Bad (Timeout). BadDecodingError,
 *   BadTypeMismatch, BadDataEncodingInvalid → Bad (DecodeError). Any other Bad status (e.g.
 *   BadNodeIdUnknown, BadNotReadable, BadUserAccessDenied) → Bad (DeviceException) with the
 *   status name in the message.
 * - Values: every numeric type (Int64 and UInt64 rounded to the nearest double), Boolean,
 *   String, LocalizedText (its text), DateTime (ISO 8601), Guid, NodeId, QualifiedName and
 *   StatusCode (as text). NaN and infinities → Bad (DecodeError). Arrays, matrices, ByteString,
 *   XmlElement, ExtensionObject and an empty Variant → Bad (DecodeError): tags are scalars.
 */
import { DataType, type DataValue, VariantArrayType } from 'node-opcua';
import type { QualityReason, Sample, SampleMetadata, TagValue } from '../../src/tags/sample.js';

/** Sample metadata of an OPC UA tag. */
export interface OpcuaSampleMetadata extends SampleMetadata {
  /** Name of a status other than Good, e.g. `UncertainLastUsableValue`. */
  statusCode?: string;
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

/** Maps one DataValue of a tag's monitored item to a sample. */
export function dataValueSample(tag: MappedTag, dataValue: DataValue, nowMs: number): Sample {
  const time =
    dataValue.sourceTimestamp?.getTime() ?? dataValue.serverTimestamp?.getTime() ?? Number.NaN;
  const utcTimestamp = isoTime(Number.isFinite(time) ? time : nowMs);
  const status = dataValue.statusCode;
  const code = status.value >>> 0;
  // The two top bits are the severity: 00 Good, 01 Uncertain, 1x Bad.
  const severity = code >>> 30;
  if (severity >= 2) return statusSample(tag, status.name, code, utcTimestamp);
  const converted = variantValue(dataValue);
  if (typeof converted === 'object') {
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
  const sample: Sample = {
    fullTagId: tag.fullTagId,
    utcTimestamp,
    quality: 'Good',
    value: converted,
  };
  if (severity === 1) {
    const metadata: OpcuaSampleMetadata = { ...tag.metadata, statusCode: statusName(status.name) };
    sample.metadata = metadata;
  } else if (tag.metadata) sample.metadata = tag.metadata;
  return sample;
}

// The values of one notification message mostly share their timestamp to the millisecond:
// formatting it once instead of once per value is a good part of the mapping's cost.
let lastTime = Number.NaN;
let lastIso = '';

function isoTime(time: number): string {
  if (time !== lastTime) {
    lastTime = time;
    lastIso = new Date(time).toISOString();
  }
  return lastIso;
}

/** A variant's value as a tag value, or why it cannot be one. */
function variantValue(dataValue: DataValue): TagValue | { problem: string } {
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
    case DataType.UInt64:
      return finite(int64(value, variant.dataType === DataType.Int64));
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

/** node-opcua carries a 64-bit integer as [high, low] 32-bit words. */
function int64(value: unknown, signed: boolean): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  const [high, low] = value as [number, number];
  const highWord = signed ? high | 0 : high >>> 0;
  return highWord * 2 ** 32 + (low >>> 0);
}
