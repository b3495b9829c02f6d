/**
 * A scripted Modbus RTU device on the device end of a socat pty pair (see {@link PtyPair}): it
 * records each read request and sends only what the test tells it to, when the test tells it
 * to — a late answer, a frame with a wrong CRC — which no real server does on demand.
 */
import { SerialPort } from 'serialport';
import { crc16 } from '../../drivers/modbus/transports/rtu-framer.js';

/** A read request as the device received it. */
export interface RtuRequest {
  unit: number;
  functionCode: number;
  address: number;
  count: number;
}

/** The device end of the line. */
export class ScriptedRtuDevice {
  /** Requests received so far, in order. */
  readonly requests: RtuRequest[] = [];
  private pending: number[] = [];

  private constructor(private readonly port: SerialPort) {
    port.on('data', (chunk: Buffer) => {
      this.pending.push(...chunk);
      // The driver sends only read requests: 8 bytes each.
      while (this.pending.length >= 8) {
        const bytes = this.pending.splice(0, 8);
        this.requests.push({
          unit: bytes[0] as number,
          functionCode: bytes[1] as number,
          address: ((bytes[2] as number) << 8) | (bytes[3] as number),
          count: ((bytes[4] as number) << 8) | (bytes[5] as number),
        });
      }
    });
  }

  /** Opens the device end `path` at `baudRate` (8N1). */
  static async open(path: string, baudRate = 9600): Promise<ScriptedRtuDevice> {
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) =>
      port.open((error) => (error ? reject(error) : resolve())),
    );
    return new ScriptedRtuDevice(port);
  }

  /** Sends `bytes` and resolves once they are written to the line. */
  send(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.port.write(Buffer.from(bytes), (error) => {
        if (error) reject(error);
        else this.port.drain(() => resolve());
      });
    });
  }

  /** Closes the device end. */
  close(): Promise<void> {
    if (!this.port.isOpen) return Promise.resolve();
    return new Promise((resolve) => this.port.close(() => resolve()));
  }
}

/**
 * The RTU answer to a read of holding or input registers: unit, function code, byte count, the
 * registers big-endian, CRC. `corruptCrc` flips the CRC's low byte.
 */
export function registersAnswer(
  unit: number,
  functionCode: number,
  registers: readonly number[],
  corruptCrc = false,
): Uint8Array {
  const bytes = new Uint8Array(5 + registers.length * 2);
  bytes[0] = unit;
  bytes[1] = functionCode;
  bytes[2] = registers.length * 2;
  registers.forEach((register, index) => {
    bytes[3 + 2 * index] = register >> 8;
    bytes[4 + 2 * index] = register & 0xff;
  });
  const crc = crc16(bytes, bytes.length - 2);
  bytes[bytes.length - 2] = (crc & 0xff) ^ (corruptCrc ? 0xff : 0);
  bytes[bytes.length - 1] = crc >> 8;
  return bytes;
}
