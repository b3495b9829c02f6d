/**
 * The `candump -L` log format of can-utils, one frame per line:
 *
 *     (1436509052.249713) vcan0 123#DEADBEEF        classic frame, 11-bit id
 *     (1436509052.249713) vcan0 1F334455#11223344   classic frame, 29-bit id (8 digits)
 *     (1436509052.249713) vcan0 123#R               remote frame (123#R4: 4 bytes requested)
 *     (1436509052.249713) vcan0 123##1DEADBEEF      CAN FD: flags nibble (1 = BRS), then data
 *     (1436509052.249713) vcan0 20000080#0000...    error frame (CAN_ERR_FLAG in the id)
 *
 * Pure: no I/O.
 */
import type { CanFrame } from '../frame.js';

/** CAN_ERR_FLAG: an 8-digit identifier with this bit set is an error frame. */
const canErrorFlag = 0x20000000;

/** One parsed log line. */
export type CandumpLine =
  /** A data or remote frame; `time` is the logged time in epoch milliseconds (fractional). */
  | { kind: 'frame'; time: number; channel: string; frame: CanFrame }
  /** An error frame; `errorClass` holds the CAN_ERR_* class bits of its identifier. */
  | { kind: 'error-frame'; time: number; channel: string; errorClass: number }
  /** A blank line or a `#` comment. */
  | { kind: 'blank' };

/**
 * Parses one line of a `candump -L` log (without its line end). The frame's `timestamp` is the
 * logged time; a player replaces it with the playback time.
 * @returns the line's content, or undefined when it is not a well-formed log line.
 */
export function parseCandumpLine(line: string): CandumpLine | undefined {
  let end = line.length;
  if (end > 0 && line.charCodeAt(end - 1) === 0x0d) end--;
  let i = 0;
  while (i < end && isBlank(line.charCodeAt(i))) i++;
  if (i === end || line.charCodeAt(i) === 0x23 /* # */) return { kind: 'blank' };
  if (line.charCodeAt(i) !== 0x28 /* ( */) return undefined;
  i++;
  // Seconds and fraction are read as integers: a double cannot hold µs since 1970 exactly.
  let seconds = 0;
  let digits = 0;
  while (i < end && isDigit(line.charCodeAt(i))) {
    seconds = seconds * 10 + (line.charCodeAt(i) - 0x30);
    i++;
    digits++;
  }
  if (digits === 0 || digits > 12) return undefined;
  let fraction = 0;
  let scale = 1;
  if (line.charCodeAt(i) === 0x2e /* . */) {
    i++;
    while (i < end && isDigit(line.charCodeAt(i)) && scale < 1e9) {
      fraction = fraction * 10 + (line.charCodeAt(i) - 0x30);
      scale *= 10;
      i++;
    }
  }
  if (line.charCodeAt(i) !== 0x29 /* ) */) return undefined;
  i++;
  const time = seconds * 1000 + (fraction * 1000) / scale;
  if (!isBlank(line.charCodeAt(i))) return undefined;
  while (i < end && isBlank(line.charCodeAt(i))) i++;
  const channelStart = i;
  while (i < end && !isBlank(line.charCodeAt(i))) i++;
  const channel = line.slice(channelStart, i);
  if (channel === '') return undefined;
  while (i < end && isBlank(line.charCodeAt(i))) i++;
  // The frame token runs to the next blank; candump -x adds direction flags after it.
  let tokenEnd = i;
  while (tokenEnd < end && !isBlank(line.charCodeAt(tokenEnd))) tokenEnd++;
  const idStart = i;
  let id = 0;
  while (i < tokenEnd && line.charCodeAt(i) !== 0x23) {
    const digit = hexDigit(line.charCodeAt(i));
    if (digit < 0) return undefined;
    id = id * 16 + digit;
    i++;
  }
  const idDigits = i - idStart;
  if (i === tokenEnd || (idDigits !== 3 && idDigits !== 8)) return undefined;
  i++; // '#'
  const extended = idDigits === 8;
  if (extended && id >= canErrorFlag) {
    if (id >= canErrorFlag * 2) return undefined;
    return { kind: 'error-frame', time, channel, errorClass: id & 0x1fffffff };
  }
  if (id > (extended ? 0x1fffffff : 0x7ff)) return undefined;
  let fd = false;
  let remote = false;
  let maxLength = 8;
  const next = line.charCodeAt(i);
  if (next === 0x23 /* ## : CAN FD */) {
    fd = true;
    maxLength = 64;
    if (hexDigit(line.charCodeAt(i + 1)) < 0) return undefined;
    i += 2;
  } else if (next === 0x52 || next === 0x72 /* R : remote */) {
    remote = true;
    i++;
  }
  let length = 0;
  let data: Uint8Array;
  if (remote) {
    if (i < tokenEnd && isDigit(line.charCodeAt(i))) {
      length = line.charCodeAt(i) - 0x30;
      i++;
    }
    if (length > 8) return undefined;
    data = new Uint8Array(0);
  } else {
    // Count the bytes first so that the payload is allocated once at its size.
    let count = 0;
    let j = i;
    while (j < tokenEnd) {
      const code = line.charCodeAt(j);
      if (code === 0x2e /* . */) {
        j++;
        continue;
      }
      if (code === 0x5f /* _ : len8_dlc suffix */) break;
      if (hexDigit(code) < 0 || hexDigit(line.charCodeAt(j + 1)) < 0 || j + 1 >= tokenEnd) {
        return undefined;
      }
      count++;
      j += 2;
    }
    if (count > maxLength) return undefined;
    data = new Uint8Array(count);
    let k = 0;
    while (i < j) {
      const code = line.charCodeAt(i);
      if (code === 0x2e) {
        i++;
        continue;
      }
      data[k++] = hexDigit(code) * 16 + hexDigit(line.charCodeAt(i + 1));
      i += 2;
    }
    length = count;
    if (i < tokenEnd) {
      // `_<dlc>`: a classic frame's raw DLC 9–15 (still 8 bytes); nothing to keep.
      if (hexDigit(line.charCodeAt(i + 1)) < 0 || i + 2 !== tokenEnd || count !== 8) {
        return undefined;
      }
      i = tokenEnd;
    }
  }
  const frame: CanFrame = { id, extended, data, length, timestamp: time };
  if (fd) frame.fd = true;
  if (remote) frame.remote = true;
  return { kind: 'frame', time, channel, frame };
}

/**
 * Writes a frame as one `candump -L` line (without line end), for generated logs.
 * @param time epoch milliseconds; written with microsecond precision.
 */
export function formatCandumpLine(time: number, channel: string, frame: CanFrame): string {
  const micros = Math.round(time * 1000);
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = String(micros - seconds * 1_000_000).padStart(6, '0');
  const id = frame.id
    .toString(16)
    .toUpperCase()
    .padStart(frame.extended ? 8 : 3, '0');
  let body: string;
  if (frame.remote) body = `#R${frame.length > 0 ? frame.length : ''}`;
  else {
    let hex = '';
    for (let i = 0; i < frame.length; i++) {
      hex += (frame.data[i] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    }
    body = frame.fd ? `##1${hex}` : `#${hex}`;
  }
  return `(${seconds}.${fraction}) ${channel} ${id}${body}`;
}

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}
