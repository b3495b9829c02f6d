import type { ModbusFrame, ModbusFramer } from './framer.js';

/** MBAP header: transaction id, protocol id (0), length, unit id. */
const headerLength = 7;

/**
 * Modbus TCP framing: a 7-byte MBAP header before the PDU; answers carry the transaction id of
 * their request, so a device that allows it can have several requests in flight.
 */
export class MbapFramer implements ModbusFramer {
  readonly matchesById = true;
  private pending: Uint8Array = new Uint8Array(0);

  encodeRead(
    id: number,
    unit: number,
    functionCode: number,
    address: number,
    count: number,
  ): Uint8Array {
    const bytes = new Uint8Array(12);
    bytes[0] = id >> 8;
    bytes[1] = id & 0xff;
    // bytes 2–3: protocol id 0; bytes 4–5: length of unit id + PDU = 6
    bytes[5] = 6;
    bytes[6] = unit;
    bytes[7] = functionCode;
    bytes[8] = address >> 8;
    bytes[9] = address & 0xff;
    bytes[10] = count >> 8;
    bytes[11] = count & 0xff;
    return bytes;
  }

  push(chunk: Uint8Array, frame: (frame: ModbusFrame) => void): void {
    let bytes: Uint8Array;
    if (this.pending.length === 0) bytes = chunk;
    else {
      bytes = new Uint8Array(this.pending.length + chunk.length);
      bytes.set(this.pending);
      bytes.set(chunk, this.pending.length);
    }
    let at = 0;
    while (bytes.length - at >= headerLength + 1) {
      const length = ((bytes[at + 4] as number) << 8) | (bytes[at + 5] as number);
      // length counts the unit id and the PDU: below 2 there is no function code.
      if (length < 2) {
        at = bytes.length;
        break;
      }
      const end = at + 6 + length;
      if (end > bytes.length) break;
      frame({
        id: ((bytes[at] as number) << 8) | (bytes[at + 1] as number),
        unit: bytes[at + 6] as number,
        functionCode: bytes[at + 7] as number,
        body: bytes.subarray(at + 8, end),
      });
      at = end;
    }
    this.pending = at === bytes.length ? new Uint8Array(0) : bytes.slice(at);
  }

  reset(): void {
    // Answers carry their id: a late one is recognised and dropped, no need to lose a partial.
  }
}
