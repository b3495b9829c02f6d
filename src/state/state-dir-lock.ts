/**
 * One daemon per state directory: `<state>/daemon.lock` holds the running daemon's pid and the
 * start time of that process, created with O_EXCL semantics (written whole under a private
 * name, then hard-linked into place, so a lock file is never seen half-written).
 *
 * Node has no flock(), so a crashed daemon leaves its lock file behind. A lock is stale when
 * its process is gone, or when the pid now belongs to another process: after a reboot or a
 * container restart pids are handed out again from the start, so a plain "is the pid alive"
 * check would keep tagd down for good after a power cut. The process start time
 * (`/proc/<pid>/stat`, field 22) tells the two apart on Linux. Where /proc cannot be read for
 * that pid, a process we may signal counts as the holder, and one we may not (EPERM: another
 * account's) does not, because a daemon on this 0700 directory runs as its owner.
 *
 * The account commands (`tagd users …`, `tagd tokens …`) do not take this lock: they run beside
 * the daemon on purpose and serialize with it through the accounts lock (file-lock.ts).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StateDirLockedError } from '../errors.js';
import { takeOver } from './file-lock.js';

/** Name of the lock file in the state directory. */
export const stateDirLockName = 'daemon.lock';

/** What the lock file holds. */
interface LockRecord {
  pid: number;
  /** Start time of the process in clock ticks since boot (Linux); absent where unknown. */
  startTime?: string;
}

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
    this.file = join(stateDir, stateDirLockName);
  }

  /**
   * Takes the lock, taking over a stale one.
   * @throws StateDirLockedError naming the pid of the daemon that holds it.
   */
  async acquire(): Promise<void> {
    if (this.held) return;
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    const record: LockRecord = { pid: process.pid, ...startTimeField(process.pid) };
    const text = `${JSON.stringify(record)}\n`;
    // A few rounds only: each one either creates the lock, finds a live holder, or removes a
    // stale lock; losing a race to another starting daemon ends in its live lock next round.
    for (let round = 0; round < 5; round++) {
      if (await createExclusive(this.file, text)) {
        this.held = record;
        return;
      }
      const found = await readLock(this.file);
      if (found === undefined) continue; // released meanwhile
      if (isAlive(found.record)) {
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
  }
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
        },
        inode: stats.ino,
      };
    }
  } catch {
    // Garbage: no daemon writes that, so it is stale (pid 0 is never alive below).
  }
  return { record: { pid: 0 }, inode: stats.ino };
}

/** True when the process that wrote the record still runs. */
function isAlive(record: LockRecord): boolean {
  if (record.pid <= 0) return false;
  let signalable: boolean;
  try {
    process.kill(record.pid, 0);
    signalable = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    signalable = false; // EPERM: it exists, under another account
  }
  const now = processStartTime(record.pid);
  if (now !== undefined && record.startTime !== undefined) return now === record.startTime;
  return signalable;
}

function startTimeField(pid: number): { startTime?: string } {
  const startTime = processStartTime(pid);
  return startTime === undefined ? {} : { startTime };
}

/**
 * Start time of a process in clock ticks since boot, from `/proc/<pid>/stat` field 22; undefined
 * where /proc is missing (not Linux) or hides the process.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may itself hold spaces and ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return fields[19];
  } catch {
    return undefined;
  }
}
