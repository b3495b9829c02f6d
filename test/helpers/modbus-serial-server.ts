/**
 * A Modbus TCP server on modbus-serial's ServerTCP, in-process, holding tables the test may
 * change between polls; it counts the read requests it answers.
 */
import { createServer } from 'node:net';
import ModbusRTU from 'modbus-serial';

/** Contents of the four tables, from address 0; reading past the end is "illegal data address". */
export interface ServerTables {
  co?: number[];
  di?: number[];
  hr?: number[];
  ir?: number[];
}

/** A running in-process server. */
export interface ModbusSerialServer {
  port: number;
  /** Requests answered so far, per function code. */
  requests: Record<number, number>;
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (ServerTCP turns port 0 into 502, so it needs a real one). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function range(table: number[] | undefined, address: number, length: number): number[] {
  if (table === undefined || address + length > table.length) {
    throw { modbusErrorCode: 2, msg: 'Illegal data address' };
  }
  return table.slice(address, address + length);
}

/** Starts ServerTCP on 127.0.0.1 (on `port`, or a free one) serving `tables` to unit 1. */
export async function startModbusSerialServer(
  tables: ServerTables,
  port?: number,
): Promise<ModbusSerialServer> {
  const requests: Record<number, number> = {};
  const count = (fc: number) => {
    requests[fc] = (requests[fc] ?? 0) + 1;
  };
  const bit = (table: number[] | undefined, address: number) => range(table, address, 1)[0] === 1;
  const vector = {
    getCoil: (address: number) => bit(tables.co, address),
    getDiscreteInput: (address: number) => bit(tables.di, address),
    getMultipleHoldingRegisters: (address: number, length: number) => {
      count(3);
      return range(tables.hr, address, length);
    },
    getMultipleInputRegisters: (address: number, length: number) => {
      count(4);
      return range(tables.ir, address, length);
    },
    getHoldingRegister: (address: number) => {
      count(3);
      return range(tables.hr, address, 1)[0] as number;
    },
    getInputRegister: (address: number) => {
      count(4);
      return range(tables.ir, address, 1)[0] as number;
    },
  };
  const chosen = port ?? (await freePort());
  const server = new ModbusRTU.ServerTCP(vector, { host: '127.0.0.1', port: chosen, unitID: 1 });
  await new Promise<void>((resolve, reject) => {
    server.once('initialized', () => resolve());
    server.once('serverError', reject);
  });
  // Errors of a client socket (a driver that went away) are expected; without a listener the
  // emitter would throw them.
  server.on('socketError', () => {});
  server.on('error', () => {});
  return {
    port: chosen,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of server.socks.keys()) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
