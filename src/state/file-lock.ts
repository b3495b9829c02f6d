import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { ServiceBusyError } from '../errors.js';
import { currentBootId, writerRuns } from './process-alive.js';

/** Options of {@link withFileLock}. */
export interface FileLockOptions {
  /** Give up after this many milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** Wait between attempts, ms. Default 10. */
  retryMs?: number;
}

// Written into every lock this process takes. A lock with our pid but another token was left by
// an earlier process that had the same pid (a restart in a container reuses pids); one with our
// token is this process's own, held or just released, and never taken over: judging it stale
// from the pid alone raced with its release, and two holders here could then overlap.
const processToken = randomBytes(8).toString('hex');

/** An empty lock file older than this is a holder that died between create and write, ms. */
const emptyLockGraceMs = 5_000;

/**
 * Runs `work` while holding an exclusive lock file, so that two processes (the daemon and
 * `tagd users …`) never read-modify-write the same file at once. The lock file holds the
 * holder's pid, the boot id and a token of the holding process, a line each. A lock is taken
 * over when its holder is gone: it was written under another boot, the pid no longer exists,
 * the pid is our own but the token is not (a restart reused the pid), or the file stayed empty
 * past a grace period. A pid we may not signal (EPERM) counts as a holder (process-alive.ts).
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
      await handle.writeFile(`${process.pid}\n${currentBootId() ?? ''}\n${processToken}\n`);
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
    await unlink(lockFile).catch(() => undefined);
  }
}

/** The inode of the lock file when its holder is gone; undefined while it is held. */
async function staleLockInode(lockFile: string): Promise<number | undefined> {
  const stats = await stat(lockFile).catch(() => undefined);
  if (!stats) return undefined;
  const [pidText = '', bootId = '', token = ''] = (
    await readFile(lockFile, 'utf8').catch(() => '')
  ).split('\n');
  const pid = Number(pidText.trim());
  if (!Number.isInteger(pid) || pid <= 0) {
    return Date.now() - stats.mtimeMs > emptyLockGraceMs ? stats.ino : undefined;
  }
  const record = { pid, ...(bootId.trim() !== '' ? { bootId: bootId.trim() } : {}) };
  return writerRuns(record, { ownRecord: token.trim() === processToken }) ? undefined : stats.ino;
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
