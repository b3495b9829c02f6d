import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { ServiceBusyError } from '../errors.js';

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Give up after this many milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** Wait between attempts, ms. Default 10. */
  retryMs?: number;
}

// Lock files this process holds right now. A lock file with our pid that is not in here was
// left by an earlier process that had the same pid (a restart in a container reuses pids).
// Counted, not a set: a new hold can begin here before the previous one has finished releasing.
const heldByThisProcess = new Map<string, number>();

/** An empty lock file older than this is a holder that died between create and write, ms. */
const emptyLockGraceMs = 5_000;

/**
 * Runs `work` while holding an exclusive lock file, so that two processes (the daemon and
 * `tagd users …`) never read-modify-write the same file at once. The lock file holds the
 * holder's pid. A lock is taken over when its holder is gone: the pid no longer exists, the
 * pid is our own but this process does not hold the lock (a restart reused the pid), or the
 * file stayed empty past a grace period.
 * @throws ServiceBusyError (503) when the lock cannot be had within `timeoutMs`.
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
      heldByThisProcess.set(lockFile, (heldByThisProcess.get(lockFile) ?? 0) + 1);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const staleInode = await staleLockInode(lockFile);
      if (staleInode !== undefined) {
        await takeOver(lockFile, staleInode);
        continue;
      }
      if (Date.now() > deadline) {
        throw new ServiceBusyError(`Timed out waiting for the lock ${lockFile}; try again.`);
      }
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 10));
    }
  }
  try {
    return await work();
  } finally {
    // Unlink before forgetting: until then a waiter here must see the lock as held, not stale.
    await unlink(lockFile).catch(() => undefined);
    const holds = (heldByThisProcess.get(lockFile) ?? 1) - 1;
    if (holds > 0) heldByThisProcess.set(lockFile, holds);
    else heldByThisProcess.delete(lockFile);
  }
}

/** The inode of the lock file when its holder is gone; undefined while it is held. */
async function staleLockInode(lockFile: string): Promise<number | undefined> {
  const stats = await stat(lockFile).catch(() => undefined);
  if (!stats) return undefined;
  const pid = Number((await readFile(lockFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0) {
    return Date.now() - stats.mtimeMs > emptyLockGraceMs ? stats.ino : undefined;
  }
  if (pid === process.pid) return heldByThisProcess.has(lockFile) ? undefined : stats.ino;
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH' ? stats.ino : undefined;
  }
}

/**
 * Removes a lock file judged stale, unless it was replaced meanwhile. Rename, not unlink: if
 * another process replaced the stale lock with its own fresh one since we judged it, we notice
 * (another inode) and put that lock back instead of deleting it.
 * @param staleInode the inode of the lock file that was judged stale.
 */
export async function takeOver(lockFile: string, staleInode: number): Promise<void> {
  const aside = `${lockFile}.${randomBytes(4).toString('hex')}.stale`;
  try {
    await rename(lockFile, aside);
  } catch {
    return;
  }
  const moved = await stat(aside).catch(() => undefined);
  if (moved && moved.ino !== staleInode) await link(aside, lockFile).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}
