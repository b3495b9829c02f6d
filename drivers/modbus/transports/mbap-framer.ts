import type { FrameSink, ModbusFramer } from './framer.js';
import { PendingBytes } from './pending-bytes.js';

/** Least MBAP length: the unit id and a function code. */
const minLength = 2;
/** Greatest MBAP length: the unit id and the largest PDU (253 bytes). */
const maxLength = 254;

/**
 * Modbus TCP framing: a 7-byte MBAP header before the PDU; answers carry the transaction id of
 * their request, so a device that allows it can have several requests in flight. Frames follow
 * each other without a marker, so a header with a protocol id other than 0 or a length outside
 * 2–254 leaves no way to find the next one: it is reported out of step.
 */
export class MbapFramer implements ModbusFramer {
  readonly matchesById = true;
  private readonly pending = new PendingBytes();

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

  encodeRequest(id: number, unit: number, functionCode: number, data: Uint8Array): Uint8Array {
    const bytes = new Uint8Array(8 + data.length);
    bytes[0] = id >> 8;
    bytes[1] = id & 0xff;
    const length = 2 + data.length;
    bytes[4] = length >> 8;
    bytes[5] = length & 0xff;
    bytes[6] = unit;
    bytes[7] = functionCode;
    bytes.set(data, 8);
    return bytes;
  }

  push(chunk: Uint8Array, sink: FrameSink): void {
    const bytes = this.pending.joined(chunk);
    let at = 0;
    while (bytes.length - at >= 6) {
      const protocol = ((bytes[at + 2] as number) << 8) | (bytes[at + 3] as number);
      const length = ((bytes[at + 4] as number) << 8) | (bytes[at + 5] as number);
      // length counts the unit id and the PDU (function code and at most 252 bytes). A header
      // that breaks these rules means we lost step with the stream: nothing after it can be
      // trusted to start a frame.
      if (protocol !== 0 || length < minLength || length > maxLength) {
        this.pending.clear();
        sink.malformed(
          protocol !== 0
            ? `MBAP header with protocol id ${protocol}, not 0`
            : `MBAP header with length ${length}, outside ${minLength}–${maxLength}`,
          true,
        );
        return;
      }
      const end = at + 6 + length;
      if (end > bytes.length) break;
      sink.frame({
        id: ((bytes[at] as number) << 8) | (bytes[at + 1] as number),
        unit: bytes[at + 6] as number,
        functionCode: bytes[at + 7] as number,
        body: bytes.subarray(at + 8, end),
      });
      at = end;
    }
    this.pending.keep(bytes, at);
  }

  reset(): void {
    // Answers carry their id: a late one is recognised and dropped, no need to lose a partial.
  }
}
