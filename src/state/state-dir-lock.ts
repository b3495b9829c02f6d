/**
 * One daemon per state directory: `<state>/daemon.lock` holds the running daemon's pid, the
 * start time of that process and the boot id, created with O_EXCL semantics (written whole
 * under a private name, then hard-linked into place, so a lock file is never seen half-written).
 *
 * Node has no flock(), so a crashed daemon leaves its lock file behind. A lock is stale when it
 * was written under another boot, when its pid is our own but this process did not take it (a
 * container restarted as PID 1 gets the pid its predecessor had), when its process is gone, or
 * when the pid now belongs to another process (the start time, `/proc/<pid>/stat` field 22,
 * differs). Pids are handed out again after a reboot or a container restart, so a plain "is the
 * pid alive" check would keep tagd down for good after a power cut. A process we may not signal
 * (EPERM: another account's, or hidden by hidepid / ProtectProc=invisible) counts as the
 * holder: taking its lock could let two daemons write the same state. See process-alive.ts.
 *
 * The account commands (`tagd users …`, `tagd tokens …`) do not take this lock: they run beside
 * the daemon on purpose and serialize with it through the accounts lock (file-lock.ts).
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { StateDirLockedError, StateDirUnusableError } from '../errors.js';
import { takeOver } from './file-lock.js';
import { currentBootId, processStartTime, type WriterRecord, writerRuns } from './process-alive.js';

export { processStartTime } from './process-alive.js';

/** Name of the lock file in the state directory. */
export const stateDirLockName = 'daemon.lock';

/** What the lock file holds: pid, start time (clock ticks since boot) and boot id (Linux). */
type LockRecord = WriterRecord;

// Lock files a StateDirLock of this process holds right now: a lock with our pid that is not in
// here was left by an earlier process that had the same pid.
const heldByThisProcess = new Set<string>();

/**
 * The daemon's hold on its state directory. Constructing does nothing; {@link acquire} takes
 * the lock, {@link release} gives it back.
 */
export class StateDirLock {
  /** Path of the lock file. */
  readonly file: string;
  private held: LockRecord | undefined;

  /** @param stateDir the state directory; created 0700 by acquire() when missing. */
  constructor(readonly stateDir: string) {
    // Absolute: it keys the locks this process holds, whatever spelling the caller used.
    this.file = resolve(stateDir, stateDirLockName);
  }

  /**
   * Takes the lock, taking over a stale one.
   * @throws StateDirLockedError naming the pid of the daemon that holds it;
   *   StateDirUnusableError when the directory cannot be created or written.
   */
  async acquire(): Promise<void> {
    try {
      await this.acquireOnce();
    } catch (error) {
      throw unusable(this.stateDir, error);
    }
  }

  private async acquireOnce(): Promise<void> {
    if (this.held) return;
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    const startTime = processStartTime(process.pid);
    const bootId = currentBootId();
    const record: LockRecord = {
      pid: process.pid,
      ...(startTime !== undefined ? { startTime } : {}),
      ...(bootId !== undefined ? { bootId } : {}),
    };
    const text = `${JSON.stringify(record)}\n`;
    // A few rounds only: each one either creates the lock, finds a live holder, or removes a
    // stale lock; losing a race to another starting daemon ends in its live lock next round.
    for (let round = 0; round < 5; round++) {
      if (await createExclusive(this.file, text)) {
        this.held = record;
        heldByThisProcess.add(this.file);
        return;
      }
      const found = await readLock(this.file);
      if (found === undefined) continue; // released meanwhile
      if (writerRuns(found.record, { ownRecord: heldByThisProcess.has(this.file) })) {
        throw new StateDirLockedError(this.stateDir, found.record.pid, this.file);
      }
      await takeOver(this.file, found.inode);
    }
    const found = await readLock(this.file);
    throw new StateDirLockedError(this.stateDir, found?.record.pid ?? 0, this.file);
  }

  /** Removes the lock file if it is still this daemon's. Idempotent. */
  async release(): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    const found = await readLock(this.file);
    if (found && found.record.pid === held.pid && found.record.startTime === held.startTime) {
      await unlink(this.file).catch(() => undefined);
    }
    // Forgotten after the unlink: until then another acquire here must see the lock as held.
    heldByThisProcess.delete(this.file);
  }
}

/** File-system errors that mean the state directory is misconfigured, not a passing failure. */
const unusableCodes: ReadonlySet<string> = new Set([
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EEXIST',
]);

/**
 * Maps a failure to take the lock: permission denied, a read-only file system or a path through
 * a file become StateDirUnusableError (exit 78: systemd restarting every 2 s cannot fix them);
 * anything else (ENOSPC, EIO…) is passed on as is, since it may clear.
 */
export function unusable(stateDir: string, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (error instanceof StateDirLockedError || code === undefined || !unusableCodes.has(code)) {
    return error;
  }
  return new StateDirUnusableError(
    stateDir,
    `tagd cannot use the state directory ${stateDir}: ${(error as Error).message}. Give the tagd account a writable directory (TAGD_STATE_DIR).`,
    { cause: error },
  );
}

// Written whole under a private name, then linked: link() fails with EEXIST when a lock exists,
// and a reader never sees an empty lock file (which it could not tell from a dead writer).
async function createExclusive(file: string, text: string): Promise<boolean> {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    await link(temporary, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/**
 * The pid of the daemon that holds the state directory's lock and still runs (the same
 * staleness rules as {@link StateDirLock.acquire}), or undefined when none does: how `tagd
 * profile import` finds the daemon to tell to reload.
 */
export async function runningDaemonPid(stateDir: string): Promise<number | undefined> {
  const found = await readLock(resolve(stateDir, stateDirLockName));
  if (found === undefined || found.record.pid === process.pid) return undefined;
  return writerRuns(found.record) ? found.record.pid : undefined;
}

async function readLock(file: string): Promise<{ record: LockRecord; inode: number } | undefined> {
  const stats = await stat(file).catch(() => undefined);
  if (!stats) return undefined;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<LockRecord>;
    if (Number.isInteger(parsed.pid) && (parsed.pid as number) > 0) {
      return {
        record: {
          pid: parsed.pid as number,
          ...(typeof parsed.startTime === 'string' ? { startTime: parsed.startTime } : {}),
          ...(typeof parsed.bootId === 'string' ? { bootId: parsed.bootId } : {}),
        },
        inode: stats.ino,
      };
    }
  } catch {
    // Garbage: no daemon writes that, so it is stale (pid 0 is never alive below).
  }
  return { record: { pid: 0 }, inode: stats.ino };
}
