import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * tagd's version from its package.json. Looked up by walking up from this file, since it runs
 * both from src/ (tsx) and from dist/src/ (built).
 */
export const version: string = readVersion();

function readVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(folder, 'package.json');
    if (existsSync(candidate)) {
      const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'tagd' && manifest.version) return manifest.version;
    }
    const parent = dirname(folder);
    if (parent === folder) return '0.0.0-unknown';
    folder = parent;
  }
}
