import { open, readFile, unlink } from 'node:fs/promises';

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Give up after this many milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** Wait between attempts, ms. Default 10. */
  retryMs?: number;
}

/**
 * Runs `work` while holding an exclusive lock file, so that two processes (the daemon and
 * `tagd users …`) never read-modify-write the same file at once. The lock file holds the
 * holder's pid; a lock whose holder no longer exists is taken over.
 * @throws Error when the lock cannot be had within `timeoutMs`.
 */
export async function withFileLock<T>(
  lockFile: string,
  work: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await holderIsGone(lockFile)) {
        await unlink(lockFile).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for the lock ${lockFile}.`);
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 10));
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lockFile).catch(() => undefined);
  }
}

async function holderIsGone(lockFile: string): Promise<boolean> {
  const pid = Number(await readFile(lockFile, 'utf8').catch(() => ''));
  // An empty file is a holder between open and write: not gone.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
