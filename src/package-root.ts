import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of tagd's package.json, found by walking up from this file: it runs both from
 * src/ (tsx) and from dist/src/ (built), at different depths.
 */
export const packageRoot: string = findPackageRoot();

function findPackageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(folder, 'package.json');
    if (
      existsSync(candidate) &&
      (JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }).name === 'tagd'
    ) {
      return folder;
    }
    const parent = dirname(folder);
    if (parent === folder) throw new Error('tagd: cannot find its package.json');
    folder = parent;
  }
}
