/**
 * A built console held in memory: the page and its hashed assets, each with its media type and
 * a gzipped copy made once at load (the bundle is small and never changes while tagd runs).
 */
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { type ConsoleManifest, manifestFileName } from './console-manifest.js';

/** One file ready to send. */
export interface ConsoleFile {
  /** Media type with charset, e.g. `text/javascript; charset=utf-8`. */
  type: string;
  body: Buffer;
  /** The body gzipped, or undefined when gzip does not make it smaller. */
  gzip: Buffer | undefined;
}

/** The console page and assets. */
export interface ConsoleBundle {
  /** index.html. */
  index: ConsoleFile;
  /** Hashed asset name → file. */
  assets: ReadonlyMap<string, ConsoleFile>;
}

const mediaTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/**
 * Loads a console built by build-console.ts.
 * @returns undefined when the folder holds no build (`npm run build` not run), so the daemon
 *   runs without a console rather than not at all.
 * @throws when a file the manifest names cannot be read (a damaged install).
 */
export async function loadConsoleBundle(folder: string): Promise<ConsoleBundle | undefined> {
  let manifest: ConsoleManifest;
  try {
    manifest = JSON.parse(await readFile(join(folder, manifestFileName), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const load = async (name: string): Promise<ConsoleFile> => {
    const body = await readFile(join(folder, name));
    const type = mediaTypes[extname(name)] ?? 'application/octet-stream';
    const packed = gzipSync(body, { level: 9 });
    return { type, body, gzip: packed.length < body.length ? packed : undefined };
  };
  const assets = new Map<string, ConsoleFile>();
  for (const name of manifest.assets) assets.set(name, await load(name));
  return { index: await load(manifest.index), assets };
}
