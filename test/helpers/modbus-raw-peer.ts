/**
 * A raw TCP peer for Modbus tests that need a misbehaving device: a net.Server on port 0 that
 * hands each MBAP read request to the test, which decides what bytes go back (a garbage header,
 * a wrong transaction id, nothing at all).
 */
import { createServer, type Socket } from 'node:net';

/** A read request as the peer received it. */
export interface MbapRequest {
  id: number;
  unit: number;
  functionCode: number;
  address: number;
  count: number;
  /** 1 for the first connection accepted, 2 for the next… */
  connection: number;
}

/** A running raw peer. */
export interface RawModbusPeer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open now. */
  open(): number;
  /** Every request received, in order. */
  requests: MbapRequest[];
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

/**
 * Starts a peer on 127.0.0.1; `answer` returns the bytes to send back for a request, or
 * undefined to stay silent.
 */
export async function startRawModbusPeer(
  answer: (request: MbapRequest) => Uint8Array | undefined,
): Promise<RawModbusPeer> {
  const sockets = new Set<Socket>();
  const requests: MbapRequest[] = [];
  let accepted = 0;
  const server = createServer((socket) => {
    const connection = ++accepted;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // The driver sends only read requests: 12 bytes each.
      while (pending.length >= 12) {
        const request: MbapRequest = {
          id: pending.readUInt16BE(0),
          unit: pending[6] as number,
          functionCode: pending[7] as number,
          address: pending.readUInt16BE(8),
          count: pending.readUInt16BE(10),
          connection,
        };
        pending = pending.subarray(12);
        requests.push(request);
        const bytes = answer(request);
        if (bytes !== undefined && !socket.destroyed) socket.write(bytes);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    connections: () => accepted,
    open: () => sockets.size,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The MBAP answer to a read of registers: transaction id, protocol id, length, unit, function
 * code, byte count, registers. `protocol` and `length` override the header's fields.
 */
export function mbapRegistersAnswer(
  request: Pick<MbapRequest, 'id' | 'unit' | 'functionCode'>,
  registers: readonly number[],
  header: { id?: number; protocol?: number; length?: number } = {},
): Uint8Array {
  const bytes = Buffer.alloc(9 + registers.length * 2);
  bytes.writeUInt16BE(header.id ?? request.id, 0);
  bytes.writeUInt16BE(header.protocol ?? 0, 2);
  bytes.writeUInt16BE(header.length ?? 3 + registers.length * 2, 4);
  bytes[6] = request.unit;
  bytes[7] = request.functionCode;
  bytes[8] = registers.length * 2;
  registers.forEach((register, index) => {
    bytes.writeUInt16BE(register, 9 + 2 * index);
  });
  return bytes;
}
