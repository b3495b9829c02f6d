/**
 * One CAN or CAN FD frame as the transports hand it to the CAN driver, whatever it came from
 * (a SocketCAN socket, an SLCAN adapter, a candump log).
 */

/** A received CAN frame. */
export interface CanFrame {
  /** Identifier: 11 bits for a standard frame, 29 bits for an extended one (no flag bits). */
  id: number;
  /** True for a 29-bit (extended) identifier. */
  extended: boolean;
  /**
   * Payload. Its length is at least `length`; bytes from `length` on are not part of the frame.
   * Empty for a remote frame.
   */
  data: Uint8Array;
  /**
   * Payload length in bytes (the DLC converted to bytes): 0–8 for classic CAN, up to 64 for
   * CAN FD. For a remote frame, the length requested.
   */
  length: number;
  /** When the frame was received (or is played back), milliseconds since the Unix epoch. */
  timestamp: number;
  /** True for a CAN FD frame. Default: false. */
  fd?: boolean;
  /** True for a remote transmission request (RTR): no payload. Default: false. */
  remote?: boolean;
}

/** CAN FD lengths by DLC code 9–15 (codes 0–8 are the byte count itself). */
const fdLengths = [12, 16, 20, 24, 32, 48, 64] as const;

/**
 * The payload length in bytes of a DLC code.
 * @param dlc the 4-bit DLC, 0–15.
 * @param fd true for CAN FD, where codes 9–15 mean 12–64 bytes; classic CAN caps them at 8.
 */
export function dlcToLength(dlc: number, fd: boolean): number {
  if (dlc <= 8) return dlc;
  return fd ? (fdLengths[dlc - 9] ?? 64) : 8;
}

/** The DLC code of a payload length: the length itself up to 8, else the smallest FD code that holds it. */
export function lengthToDlc(length: number): number {
  if (length <= 8) return length;
  const index = fdLengths.findIndex((bytes) => bytes >= length);
  return index < 0 ? 15 : 9 + index;
}
