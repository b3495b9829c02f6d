import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BuildConsoleResult, buildConsole } from '../../src/console/build-console.js';

let built: Promise<BuildConsoleResult> | undefined;

/**
 * The console bundle, built once per test process into a temp folder (esbuild takes about a
 * second), removed when the process exits. Tests run from source: they never need `npm run build`.
 */
export function consoleBuild(): Promise<BuildConsoleResult> {
  built ??= mkdtemp(join(tmpdir(), 'tagd-console-')).then((outDir) => {
    process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
    return buildConsole({ outDir });
  });
  return built;
}
