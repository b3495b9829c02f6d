/**
 * Makes a serialport port report a hung-up line as a disconnection.
 *
 * When the other end of a terminal goes away (a pseudo-terminal's master closes, as with
 * ser2net or socat, or a modem hangs up), read() on the line returns 0 bytes forever.
 * @serialport/bindings-cpp 12 answers a 0-byte read by reading again at once, so the port spins
 * a core and never reports the loss. This replaces the read of one opened port with the same
 * loop, except that 0 bytes ends it as a disconnection (as do EIO and the other errors of a
 * device that went away), which serialport turns into a `close` event with the error.
 */
import { read } from 'node:fs';
import { promisify } from 'node:util';

const readAsync = promisify(read);

/** The parts of @serialport/bindings-cpp's Linux and Darwin port bindings this relies on. */
interface UnixPortBinding {
  fd: number | null;
  poller?: { once(event: 'readable', listener: (error?: Error | null) => void): unknown };
  read(
    buffer: Buffer,
    offset: number,
    length: number,
  ): Promise<{ bytesRead: number; buffer: Buffer }>;
}

/** Errors that mean "no data yet": wait until the line is readable. */
const retryCodes = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR']);
/** Errors that mean the device or line is gone. */
const disconnectCodes = new Set(['EBADF', 'ENXIO', 'EIO', 'ENODEV']);

function disconnection(message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, cause === undefined ? {} : { cause }), {
    disconnect: true,
  });
}

/** What bindings-cpp throws for a read on a closed port; serialport ignores it (`canceled`). */
function notOpen(): Error {
  return Object.assign(new Error('Port is not open'), { canceled: true });
}

function readable(binding: UnixPortBinding): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!binding.poller) return reject(new Error('the serial port has no poller'));
    binding.poller.once('readable', (error) => (error ? reject(error) : resolve()));
  });
}

async function readUntilHangup(
  binding: UnixPortBinding,
  buffer: Buffer,
  offset: number,
  length: number,
): Promise<{ bytesRead: number; buffer: Buffer }> {
  for (;;) {
    const fd = binding.fd;
    if (fd === null) throw notOpen();
    try {
      const { bytesRead } = await readAsync(fd, buffer, offset, length, null);
      if (bytesRead === 0) throw disconnection('the serial line hung up (end of file)');
      return { bytesRead, buffer };
    } catch (error) {
      // Closed while the read was under way: its poller is destroyed, and polling a destroyed
      // poller crashes the process (a native handle), so stop here as bindings-cpp does.
      if (binding.fd === null) throw notOpen();
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (retryCodes.has(code)) {
        await readable(binding);
        continue;
      }
      if (disconnectCodes.has(code)) {
        throw disconnection(`the serial line went away (${code})`, error);
      }
      throw error;
    }
  }
}

/**
 * Replaces the read of an opened serialport port (its `port` binding) so that a hung-up line
 * ends in a `close` event instead of a busy loop. Does nothing on a binding without a file
 * descriptor and poller (Windows, mocks).
 * @param serialPort an opened `SerialPort` of the serialport package.
 */
export function reportSerialHangup(serialPort: unknown): void {
  const binding = (serialPort as { port?: Partial<UnixPortBinding> }).port;
  if (binding === undefined || typeof binding.fd !== 'number' || binding.poller === undefined) {
    return;
  }
  const unix = binding as UnixPortBinding;
  unix.read = (buffer, offset, length) => readUntilHangup(unix, buffer, offset, length);
}
