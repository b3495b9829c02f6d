import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SecretKeyError } from '../errors.js';

/**
 * Reads a private key file (mode 0600, exactly `size` bytes), creating it with random bytes
 * when missing. Creation is race-free: the key is written whole under a private name and
 * linked into place, and link() fails when the key exists, so of two processes starting at
 * once one key wins and the other reads it complete. The folder is created 0700.
 * @throws SecretKeyError when the file is readable by others, the wrong size, or unwritable.
 */
export async function loadOrCreateKey(file: string, size: number): Promise<Buffer> {
  try {
    return await readKeyFile(file, size, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(size);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(key);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temporary, file);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(file, size, true);
    throw new SecretKeyError(`Cannot create key file ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * Reads a key file of exactly `size` bytes; with `requirePrivate`, refuses one that group or
 * others can read. Errors other than the checks (ENOENT…) pass through as they are.
 */
export async function readKeyFile(
  file: string,
  size: number,
  requirePrivate: boolean,
): Promise<Buffer> {
  const handle = await open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const stats = await handle.stat();
    if (requirePrivate && (stats.mode & 0o077) !== 0) {
      throw new SecretKeyError(
        `Key file ${file} is readable by group or others (mode ${(stats.mode & 0o777).toString(8)}); run: chmod 600 ${file}`,
      );
    }
    const key = await readFile(handle);
    if (key.length !== size) {
      throw new SecretKeyError(`Key ${file} holds ${key.length} bytes; it must hold ${size}.`);
    }
    return key;
  } finally {
    await handle.close();
  }
}
