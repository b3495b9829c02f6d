/**
 * Clean-up of temporary files a crash left behind. tagd writes files durably through a
 * temporary file that is renamed (profile, users.json) or linked (keys, the daemon lock) into
 * place; a crash between the two leaves `*.tmp` files that nothing else would ever remove.
 */
import { lstat, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { processExists } from './process-alive.js';

/**
 * Removes the leftover temporary files of `folder` whose name passes `include`. Every tagd
 * temporary name carries its writer's pid (`….<pid>.<hex>.tmp`): a file whose writer still runs
 * in another process is kept, since `tagd users …` may be saving users.json right now (a pid we
 * may not signal, EPERM, counts as running: process-alive.ts). A file
 * of this process is removed: at start-up nothing of the daemon's is in flight yet. Names
 * without a pid come from older versions and are removed.
 * @returns the names removed.
 */
export async function removeLeftoverTempFiles(
  folder: string,
  include: (name: string) => boolean = () => true,
): Promise<string[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (!name.endsWith('.tmp') || !include(name)) continue;
    const pid = Number(/\.(\d+)\.[0-9a-f]+\.tmp$/.exec(name)?.[1] ?? Number.NaN);
    if (Number.isInteger(pid) && pid !== process.pid && processExists(pid)) continue;
    const path = join(folder, name);
    const stats = await lstat(path).catch(() => undefined);
    if (!stats?.isFile()) continue;
    try {
      await unlink(path);
      removed.push(name);
    } catch {
      // Gone already (its writer finished), or not ours to remove: nothing to clean.
    }
  }
  return removed;
}
