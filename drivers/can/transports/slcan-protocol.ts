/**
 * The Lawicel / SLCAN ASCII protocol spoken by CANable, CANtact, USBtin and most other serial CAN
 * adapters: every command and every frame is one line ended by CR. The adapter answers a command
 * with CR (done) or BEL (refused); received frames are lines like `t1232DEAD` (standard id 0x123,
 * 2 bytes) or `T1234567820102` (extended), optionally followed by a 4-hex-digit millisecond
 * timestamp when timestamps are on (`Z1`). Pure: no I/O.
 */
import { type CanFrame, dlcToLength, lengthToDlc } from '../frame.js';

/**
 * The `S<n>` command of each CAN bitrate the protocol defines, in bit/s. S7 is 800 kbit/s in the
 * Lawicel specification but 750 kbit/s in the CANable firmware (and python-can); both are accepted.
 */
export const slcanBitrates: ReadonlyMap<number, string> = new Map([
  [10_000, 'S0'],
  [20_000, 'S1'],
  [50_000, 'S2'],
  [100_000, 'S3'],
  [125_000, 'S4'],
  [250_000, 'S5'],
  [500_000, 'S6'],
  [750_000, 'S7'],
  [800_000, 'S7'],
  [1_000_000, 'S8'],
]);

/** The adapter timestamp counts milliseconds modulo one minute (0–59999). */
export const slcanTimestampModulus = 60_000;

/** A frame line taken apart; `adapterTimestamp` is present when the line carries one. */
export interface SlcanFrameLine {
  frame: CanFrame;
  /** The adapter's timestamp, milliseconds modulo one minute, when the line carries one. */
  adapterTimestamp?: number;
}

/**
 * Parses one frame line (without its CR): `t`/`T` data, `r`/`R` remote, `d`/`D` CAN FD and
 * `b`/`B` CAN FD with bit-rate switch, each with an optional trailing timestamp.
 * @param line the line's text.
 * @param receivedAt epoch milliseconds stored as the frame's timestamp (the caller may replace it
 *   with the adapter's time).
 * @returns the frame, or undefined when the line is not a well-formed frame.
 */
export function parseSlcanFrame(line: string, receivedAt: number): SlcanFrameLine | undefined {
  const kind = line.charCodeAt(0);
  let extended: boolean;
  let remote = false;
  let fd = false;
  switch (kind) {
    case 0x74: // t
      extended = false;
      break;
    case 0x54: // T
      extended = true;
      break;
    case 0x72: // r
      extended = false;
      remote = true;
      break;
    case 0x52: // R
      extended = true;
      remote = true;
      break;
    case 0x64: // d
    case 0x62: // b
      extended = false;
      fd = true;
      break;
    case 0x44: // D
    case 0x42: // B
      extended = true;
      fd = true;
      break;
    default:
      return undefined;
  }
  const idDigits = extended ? 8 : 3;
  const id = hexNumber(line, 1, idDigits);
  if (id < 0 || id > (extended ? 0x1fffffff : 0x7ff)) return undefined;
  const dlc = hexDigit(line.charCodeAt(1 + idDigits));
  if (dlc < 0 || (!fd && dlc > 8)) return undefined;
  const length = dlcToLength(dlc, fd);
  const dataStart = 2 + idDigits;
  const dataChars = remote ? 0 : length * 2;
  const rest = line.length - dataStart - dataChars;
  if (rest !== 0 && rest !== 4) return undefined;
  const data = new Uint8Array(remote ? 0 : length);
  for (let i = 0; i < data.length; i++) {
    const byte = hexNumber(line, dataStart + 2 * i, 2);
    if (byte < 0) return undefined;
    data[i] = byte;
  }
  const frame: CanFrame = { id, extended, data, length, timestamp: receivedAt };
  if (fd) frame.fd = true;
  if (remote) frame.remote = true;
  if (rest === 0) return { frame };
  const adapterTimestamp = hexNumber(line, dataStart + dataChars, 4);
  if (adapterTimestamp < 0 || adapterTimestamp >= slcanTimestampModulus) return undefined;
  return { frame, adapterTimestamp };
}

/**
 * Encodes a frame as the adapter sends it (and as python-can's slcan interface writes it), for
 * peers, tests and benchmarks: `t<iii><l><data>` and friends, upper-case hex, no CR.
 * @param adapterTimestamp appended as 4 hex digits when given (0–59999).
 */
export function formatSlcanFrame(frame: CanFrame, adapterTimestamp?: number): string {
  let kind: string;
  if (frame.remote) kind = frame.extended ? 'R' : 'r';
  else if (frame.fd) kind = frame.extended ? 'B' : 'b';
  else kind = frame.extended ? 'T' : 't';
  const id = frame.id
    .toString(16)
    .toUpperCase()
    .padStart(frame.extended ? 8 : 3, '0');
  let text = `${kind}${id}${lengthToDlc(frame.length).toString(16).toUpperCase()}`;
  if (!frame.remote) {
    for (let i = 0; i < frame.length; i++) {
      text += (frame.data[i] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    }
  }
  if (adapterTimestamp !== undefined) {
    text += adapterTimestamp.toString(16).toUpperCase().padStart(4, '0');
  }
  return text;
}

/**
 * Turns the adapter's minute-wrapping millisecond counter into epoch time. The first frame
 * anchors adapter time to host time; later frames keep the adapter's spacing (more exact than
 * the host's arrival times, which come in bursts) with the wrap chosen nearest to the host's
 * elapsed time. When the two drift apart by more than `maxDriftMs` (a clock running at another
 * rate, an adapter reset), the mapping re-anchors on the host time. A time is never later than
 * the host's arrival time.
 */
export class SlcanTimestampMapper {
  private anchorHost: number | undefined;
  private anchorAdapter = 0;

  /** @param maxDriftMs largest tolerated difference from host time, ms. Default: 1000. */
  constructor(private readonly maxDriftMs = 1000) {}

  /** Forgets the anchor (after a reconnect the adapter's counter means nothing). */
  reset(): void {
    this.anchorHost = undefined;
  }

  /**
   * @param adapterTimestamp the line's timestamp, ms modulo one minute.
   * @param hostNow epoch ms when the line arrived.
   * @returns the frame's epoch time in ms.
   */
  map(adapterTimestamp: number, hostNow: number): number {
    if (this.anchorHost === undefined) return this.anchor(adapterTimestamp, hostNow);
    const hostElapsed = hostNow - this.anchorHost;
    const wraps = Math.round(
      (hostElapsed - (adapterTimestamp - this.anchorAdapter)) / slcanTimestampModulus,
    );
    const adapterElapsed = adapterTimestamp - this.anchorAdapter + wraps * slcanTimestampModulus;
    const time = this.anchorHost + adapterElapsed;
    if (Math.abs(hostNow - time) > this.maxDriftMs) return this.anchor(adapterTimestamp, hostNow);
    return Math.min(time, hostNow);
  }

  private anchor(adapterTimestamp: number, hostNow: number): number {
    this.anchorHost = hostNow;
    this.anchorAdapter = adapterTimestamp;
    return hostNow;
  }
}

/** Value of a hex digit's char code, or -1. */
function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/** Value of `digits` hex digits of `text` from `start`, or -1 if one is not a hex digit. */
function hexNumber(text: string, start: number, digits: number): number {
  let value = 0;
  for (let i = start; i < start + digits; i++) {
    const digit = hexDigit(text.charCodeAt(i));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}
