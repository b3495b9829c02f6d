/**
 * The wire format of a Modbus connection: MBAP over TCP, RTU (address, PDU, CRC) on a serial
 * line. A framer encodes requests and cuts the byte stream into answers.
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
  /**
   * The bytes of any request: `data` is the PDU after the function code (a write's address,
   * quantity and values).
   */
  encodeRequest(id: number, unit: number, functionCode: number, data: Uint8Array): Uint8Array;
  /** Appends received bytes and tells `sink` of each complete answer and each malformed one. */
  push(chunk: Uint8Array, sink: FrameSink): void;
  /** Drops bytes of a partial answer (before a new request, so a late half cannot merge with its answer). */
  reset(): void;
}

/** Where a framer delivers what it cut from the stream. */
export interface FrameSink {
  /** A complete answer. */
  frame(frame: ModbusFrame): void;
  /**
   * Bytes that are no answer were dropped (a CRC mismatch, an impossible header).
   * @param reason what was wrong, for messages.
   * @param outOfStep true when the framer cannot tell where the next answer starts (MBAP, whose
   *   frames follow each other without a gap): the connection must be dropped. RTU finds its
   *   step again at the next silent interval, so its malformed frames are only counted.
   */
  malformed(reason: string, outOfStep: boolean): void;
}
