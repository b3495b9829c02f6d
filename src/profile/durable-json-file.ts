import { randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';
import { ProfileCorruptError, ProfileFileError, ProfileNotFoundError } from '../errors.js';
import { findJsonError } from './json-error-position.js';
import { profileFileLimits, readProfileFile } from './profile-file.js';

/**
 * lowdb adapter for a JSON file that must survive power loss: a write goes to a temporary
 * file in the same folder, which is fsynced, renamed over the original, and the folder fsynced,
 * so after a crash the file holds either the old or the new document, never a torn one.
 * A file that does not parse is reported and never overwritten.
 */
export class DurableJsonFile<Data> implements Adapter<Data> {
  private queue: Promise<void> = Promise.resolve();

  /** @param file path of the JSON document. */
  constructor(readonly file: string) {}

  /**
   * Reads and parses the document.
   * @throws ProfileNotFoundError when the file does not exist.
   * @throws ProfileCorruptError when it is not valid JSON, with line and column.
   * @throws ProfileFileError when it is unreadable, not a regular file or over 256 MiB.
   */
  async read(): Promise<Data> {
    let text: string;
    try {
      // Non-blocking and bounded, like every file a profile names: a FIFO must not hang start-up.
      text = (await readProfileFile(this.file, 'the file', profileFileLimits.json)).toString(
        'utf8',
      );
    } catch (error) {
      if (error instanceof ProfileFileError && error.problem === 'missing')
        throw new ProfileNotFoundError(this.file);
      throw error;
    }
    try {
      return JSON.parse(text) as Data;
    } catch (error) {
      throw new ProfileCorruptError(this.file, describeJsonError(text, error as Error));
    }
  }

  /** Replaces the document atomically and durably. Writes are serialized. */
  write(data: Data): Promise<void> {
    const next = this.queue.then(() => this.replace(`${JSON.stringify(data, null, 2)}\n`));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async replace(text: string): Promise<void> {
    const folder = dirname(this.file);
    // The pid tells a start-up clean-up whether the writer is still alive (see temp-files.ts).
    const temporary = join(
      folder,
      `.${basename(this.file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
    );
    // Keep the mode the operator gave the file; a new file is private.
    const mode = await stat(this.file).then(
      (stats) => stats.mode & 0o777,
      () => 0o600,
    );
    try {
      const handle = await open(temporary, 'wx', mode);
      try {
        // open() applies the umask; the operator's mode must survive the rewrite.
        await handle.chmod(mode);
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await syncFolder(folder);
      await rename(temporary, this.file);
      await syncFolder(folder);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Names where the JSON stops being valid, as line and column (1-based). */
function describeJsonError(text: string, error: Error): string {
  const position = findJsonError(text);
  if (position === undefined) return error.message;
  return `line ${position.line}, column ${position.column}: expected ${position.expected}`;
}
