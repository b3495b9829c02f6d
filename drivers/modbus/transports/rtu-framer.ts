import type { FrameSink, ModbusFramer } from './framer.js';
import { PendingBytes } from './pending-bytes.js';

/**
 * Modbus RTU framing: unit id, PDU, CRC-16 (polynomial 0xA001, low byte first). RTU frames
 * carry no transaction id, so only one request is in flight; an answer's length follows from
 * its function code (and byte count, for reads). A frame with a wrong CRC or an unknown function code is
 * reported malformed and the buffered bytes dropped; the connection finds its step again by
 * waiting for a silent line after the request's timeout.
 */
export class RtuFramer implements ModbusFramer {
  readonly matchesById = false;
  private readonly pending = new PendingBytes();

  encodeRead(
    _id: number,
    unit: number,
    functionCode: number,
    address: number,
    count: number,
  ): Uint8Array {
    const bytes = new Uint8Array(8);
    bytes[0] = unit;
    bytes[1] = functionCode;
    bytes[2] = address >> 8;
    bytes[3] = address & 0xff;
    bytes[4] = count >> 8;
    bytes[5] = count & 0xff;
    const crc = crc16(bytes, 6);
    bytes[6] = crc & 0xff;
    bytes[7] = crc >> 8;
    return bytes;
  }

  encodeRequest(_id: number, unit: number, functionCode: number, data: Uint8Array): Uint8Array {
    const bytes = new Uint8Array(4 + data.length);
    bytes[0] = unit;
    bytes[1] = functionCode;
    bytes.set(data, 2);
    const crc = crc16(bytes, 2 + data.length);
    bytes[2 + data.length] = crc & 0xff;
    bytes[3 + data.length] = crc >> 8;
    return bytes;
  }

  push(chunk: Uint8Array, sink: FrameSink): void {
    const bytes = this.pending.joined(chunk);
    let at = 0;
    while (bytes.length - at >= 5) {
      const functionCode = bytes[at + 1] as number;
      let length: number;
      if (functionCode & 0x80) length = 5;
      else if (functionCode >= 1 && functionCode <= 4) length = 5 + (bytes[at + 2] as number);
      // Write answers echo the address with the value or quantity (5, 6, 15, 16), or the
      // address and both masks (22).
      else if (
        functionCode === 5 ||
        functionCode === 6 ||
        functionCode === 15 ||
        functionCode === 16
      )
        length = 8;
      else if (functionCode === 22) length = 10;
      else {
        // Not an answer tagd asks for: drop what we have; the next silent interval resynchronises.
        sink.malformed(
          `RTU frame with function code ${functionCode}, not an answer to a request`,
          false,
        );
        at = bytes.length;
        break;
      }
      if (bytes.length - at < length) break;
      const crc = crc16(bytes.subarray(at), length - 2);
      if (
        (bytes[at + length - 2] as number) !== (crc & 0xff) ||
        (bytes[at + length - 1] as number) !== crc >> 8
      ) {
        sink.malformed('RTU frame with a wrong CRC', false);
        at = bytes.length;
        break;
      }
      sink.frame({
        id: undefined,
        unit: bytes[at] as number,
        functionCode,
        body: bytes.subarray(at + 2, at + length - 2),
      });
      at += length;
    }
    this.pending.keep(bytes, at);
  }

  reset(): void {
    this.pending.clear();
  }
}

const crcTable = (() => {
  const table = new Uint16Array(256);
  for (let n = 0; n < 256; n++) {
    let crc = n;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xa001 : crc >>> 1;
    table[n] = crc;
  }
  return table;
})();

/** Modbus CRC-16 of the first `length` bytes. */
export function crc16(bytes: Uint8Array, length: number): number {
  let crc = 0xffff;
  for (let i = 0; i < length; i++) {
    crc = (crc >>> 8) ^ (crcTable[(crc ^ (bytes[i] as number)) & 0xff] as number);
  }
  return crc;
}
