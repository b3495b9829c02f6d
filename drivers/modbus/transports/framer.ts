/**
 * The wire format of a Modbus connection: MBAP over TCP, RTU (address, PDU, CRC) on a serial
 * line. A framer encodes read requests and cuts the byte stream into answers.
 */

/** One answer cut from the stream. */
export interface ModbusFrame {
  /** Transaction id (MBAP); undefined on RTU, whose frames carry none. */
  id: number | undefined;
  /** Unit (slave) id the answer comes from. */
  unit: number;
  /** Function code; bit 7 set for an exception answer. */
  functionCode: number;
  /** PDU after the function code: byte count and data, or the exception code. */
  body: Uint8Array;
}

/** Encodes requests and decodes answers of one wire format. */
export interface ModbusFramer {
  /** Whether answers carry the id of their request, so several may be in flight. */
  readonly matchesById: boolean;
  /** The bytes of a read request (FC 1–4). */
  encodeRead(
    id: number,
    unit: number,
    functionCode: number,
    address: number,
    count: number,
  ): Uint8Array;
  /** Appends received bytes and calls `frame` for each complete answer. */
  push(chunk: Uint8Array, frame: (frame: ModbusFrame) => void): void;
  /** Drops bytes of a partial answer (after a timeout, so a late half cannot merge with the next). */
  reset(): void;
}
