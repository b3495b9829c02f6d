/**
 * "Does the process that wrote this still run?" for the lock files and temporary files of the
 * state directory: one answer for all of them (state-dir-lock.ts, file-lock.ts, temp-files.ts).
 */
import { readFileSync } from 'node:fs';

/** Sends signal 0: throws ESRCH when no such process exists, EPERM when it is another account's. */
export type SignalZero = (pid: number, signal: 0) => unknown;

/**
 * True when a process with this pid exists. EPERM counts as alive: the process exists but
 * belongs to another account (or /proc hides it: hidepid, ProtectProc=invisible), and taking
 * its lock would let two daemons write the same files. Pids below 1 are never alive.
 * @param signalZero how signal 0 is sent; default `process.kill`.
 */
export function processExists(pid: number, signalZero: SignalZero = process.kill): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    signalZero(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Where the kernel publishes the id of the current boot (Linux). */
export const bootIdFile = '/proc/sys/kernel/random/boot_id';

/**
 * The id of the current boot (a UUID that changes at every boot), or undefined where the file is
 * missing (not Linux). A lock recorded under another boot id is stale whatever its pid: pids are
 * handed out again from the start after a reboot, so the pid may belong to anything now.
 * @param file where to read it; default {@link bootIdFile}.
 */
export function currentBootId(file: string = bootIdFile): string | undefined {
  try {
    const id = readFileSync(file, 'utf8').trim();
    return id === '' ? undefined : id;
  } catch {
    return undefined;
  }
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

/** What a lock or temporary file says about its writer. */
export interface WriterRecord {
  pid: number;
  /** {@link processStartTime} of the writer when it wrote; absent where unknown. */
  startTime?: string;
  /** {@link currentBootId} when it was written; absent where unknown. */
  bootId?: string;
}

/** Options of {@link writerRuns}. */
export interface WriterRunsOptions {
  /**
   * True when this very process wrote the record (it holds the lock). A record with our own
   * pid that this process did not write comes from an earlier process that had the same pid:
   * a container restarted as PID 1, or pids reused after a reboot.
   */
  ownRecord?: boolean;
  /** Default: {@link currentBootId}(). */
  bootId?: string | undefined;
  /** Default: `process.kill`. */
  signalZero?: SignalZero;
  /** Default: {@link processStartTime}. */
  startTime?: (pid: number) => string | undefined;
}

/**
 * True when the process that wrote `record` still runs. False when: the pid is below 1; the
 * record is from another boot; the pid is ours but this process did not write it; no process
 * has the pid; or the pid's start time differs from the recorded one. A process we may not
 * signal (EPERM) or whose start time is hidden from us counts as the writer.
 */
export function writerRuns(record: WriterRecord, options: WriterRunsOptions = {}): boolean {
  if (!Number.isInteger(record.pid) || record.pid <= 0) return false;
  const bootId = 'bootId' in options ? options.bootId : currentBootId();
  if (record.bootId !== undefined && bootId !== undefined && record.bootId !== bootId) {
    return false;
  }
  if (record.pid === process.pid) return options.ownRecord === true;
  if (!processExists(record.pid, options.signalZero)) return false;
  const now = (options.startTime ?? processStartTime)(record.pid);
  if (now !== undefined && record.startTime !== undefined) return now === record.startTime;
  return true;
}
