/**
 * Opening a file that a profile names: tagd's own reads of the license, the DBC, the HTTPS
 * certificate and key, a publisher's caFile and the CAN replay log (at every (re)connect) go
 * through here, so none of them can hang on a FIFO, open a serial device (which raises DTR and
 * RTS on the line: tagd runs in the `dialout` group), block the libuv thread pool on a device,
 * or fill memory with a huge file.
 *
 * The OPC UA client certificate and key are read by node-opcua itself, when the driver
 * connects: tagd reads and checks them here only at start-up and reload (startup-checks.ts,
 * certificate-files.ts), so a file swapped for a FIFO or a device afterwards is not covered
 * for them.
 */
import { constants as fsConstants } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { ProfileFileError } from '../errors.js';

/** Upper bounds on the size of files a profile names, bytes. */
export const profileFileLimits = {
  /** PEM certificates, CA bundles and private keys: 1 MiB (a full public CA bundle is ~250 KiB). */
  pem: 1024 * 1024,
  /** A signed license file: 1 MiB (a real one is under 1 KiB). */
  license: 1024 * 1024,
  /** A DBC file: 32 MiB (the largest vehicle DBCs in the wild are a few MiB). */
  dbc: 32 * 1024 * 1024,
  /** The profile and users.json: 256 MiB (100,000 tags take some 20 MiB). */
  json: 256 * 1024 * 1024,
} as const;

/**
 * Opens a file a profile names for reading, and checks that it is a regular file. The path is
 * stat()ed first and anything but a regular file is refused without being opened: opening a
 * tty alone raises its modem lines and would disturb an RTU bus on it. The open is then
 * non-blocking and the descriptor is checked again (fstat), because the path may have been
 * swapped between the two: a FIFO or device swapped in returns at once and is refused instead
 * of holding a thread-pool thread until something writes to it. Symbolic links are followed
 * (certificates are commonly links, e.g. Let's Encrypt `live/`).
 * @param what names the file in the error, e.g. `the HTTPS certificate file`.
 * @throws ProfileFileError when it is missing, unreadable or not a regular file.
 */
export async function openProfileFile(file: string, what: string): Promise<FileHandle> {
  let before: Awaited<ReturnType<typeof stat>>;
  try {
    before = await stat(file);
  } catch (error) {
    throw openError(file, what, error as NodeJS.ErrnoException);
  }
  checkRegular(file, what, before);
  let handle: FileHandle;
  try {
    handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY);
  } catch (error) {
    throw openError(file, what, error as NodeJS.ErrnoException);
  }
  try {
    checkRegular(file, what, await handle.stat());
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function checkRegular(
  file: string,
  what: string,
  stats: { isDirectory(): boolean; isFile(): boolean },
): void {
  if (stats.isDirectory()) {
    throw new ProfileFileError(
      file,
      'not-a-file',
      `Cannot read ${what} ${file}: it is a directory.`,
    );
  }
  if (!stats.isFile()) {
    throw new ProfileFileError(
      file,
      'not-a-file',
      `Cannot read ${what} ${file}: it is not a regular file (a FIFO, socket or device).`,
    );
  }
}

/**
 * Checks, without reading it, that a file a profile names is a regular file within `maxBytes`:
 * for a start-up check on a file its user reads right after.
 * @param what names the file in the error, e.g. `the DBC file`.
 * @param maxBytes largest size accepted, bytes; see {@link profileFileLimits}.
 * @throws ProfileFileError when it is missing, unreadable, not a regular file or too large.
 */
export async function checkProfileFile(
  file: string,
  what: string,
  maxBytes: number,
): Promise<void> {
  const handle = await openProfileFile(file, what);
  try {
    if ((await handle.stat()).size > maxBytes) throw tooLargeError(file, what, maxBytes);
  } finally {
    await handle.close();
  }
}

/**
 * Reads a whole file a profile names, at most `maxBytes` long, from the descriptor that was
 * checked (not by path again, which could by then name something else). The size fstat gives
 * only sizes the first buffer: the limit holds for what is read, so a file that grew after
 * fstat is caught, and a file the kernel sizes 0 while it has contents (`/proc`) is read.
 * @param what names the file in the error, e.g. `the HTTPS certificate file`.
 * @param maxBytes largest size accepted, bytes; see {@link profileFileLimits}.
 * @throws ProfileFileError when it is missing, unreadable, not a regular file or too large.
 */
export async function readProfileFile(
  file: string,
  what: string,
  maxBytes: number,
): Promise<Buffer> {
  const handle = await openProfileFile(file, what);
  try {
    const tooLarge = () => tooLargeError(file, what, maxBytes);
    const { size } = await handle.stat();
    if (size > maxBytes) throw tooLarge();
    // One byte more than allowed, so that reading it tells the file is over the limit.
    const cap = maxBytes + 1;
    let buffer = Buffer.alloc(Math.min(Math.max(size + 1, minReadBuffer), cap));
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (buffer.length === cap) throw tooLarge();
        const larger = Buffer.alloc(Math.min(buffer.length * 2, cap));
        buffer.copy(larger, 0, 0, length);
        buffer = larger;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length);
  } catch (error) {
    if (error instanceof ProfileFileError) throw error;
    throw openError(file, what, error as NodeJS.ErrnoException);
  } finally {
    await handle.close();
  }
}

/** First buffer of a file fstat sizes smaller, bytes (a `/proc` file is sized 0). */
const minReadBuffer = 16 * 1024;

function tooLargeError(file: string, what: string, maxBytes: number): ProfileFileError {
  return new ProfileFileError(
    file,
    'too-large',
    `Cannot read ${what} ${file}: it is larger than the limit of ${formatBytes(maxBytes)}.`,
  );
}

function openError(file: string, what: string, error: NodeJS.ErrnoException): ProfileFileError {
  switch (error.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new ProfileFileError(file, 'missing', `Cannot read ${what} ${file}: no such file.`, {
        cause: error,
      });
    case 'EACCES':
    case 'EPERM':
      return new ProfileFileError(
        file,
        'unreadable',
        `Cannot read ${what} ${file}: permission denied.`,
        { cause: error },
      );
    case 'EISDIR':
      return new ProfileFileError(
        file,
        'not-a-file',
        `Cannot read ${what} ${file}: it is a directory.`,
        {
          cause: error,
        },
      );
    default:
      return new ProfileFileError(
        file,
        'unreadable',
        `Cannot read ${what} ${file}: ${error.message}.`,
        { cause: error },
      );
  }
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
