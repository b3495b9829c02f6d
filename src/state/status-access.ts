/**
 * How `tagd status` finds and authenticates to the running daemon, both through the state
 * directory (0700, the daemon's user):
 * - the local status token, a random secret in `<state>/status.key` (mode 0600), which only the
 *   daemon's user and root can read. The daemon accepts it on `GET /api/v2/Status` alone, so the
 *   status needs no account and no token an operator must keep, and it grants nothing but the
 *   status: no tag values, no configuration, no changes;
 * - `<state>/status.json`, the URL of the loopback HTTP listener as it actually listens (after
 *   `--listen`, with the port a port 0 got), written at each start.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { loadOrCreateKey, readKeyFile } from './key-file.js';

/** The token file's name in the state directory. */
export const statusKeyFile = 'status.key';
/** Random bytes in the token file (256 bits). */
const statusKeyBytes = 32;

/** The daemon's side: the token, created on the first start and kept across restarts. */
export async function loadOrCreateStatusToken(stateDir: string): Promise<string> {
  return (await loadOrCreateKey(join(stateDir, statusKeyFile), statusKeyBytes)).toString(
    'base64url',
  );
}

/**
 * The command's side: the running daemon's token.
 * @throws ENOENT when no daemon ever started on the state directory, EACCES for other users,
 *   SecretKeyError when the file is readable by others or has the wrong size.
 */
export async function readStatusToken(stateDir: string): Promise<string> {
  return (await readKeyFile(join(stateDir, statusKeyFile), statusKeyBytes, true)).toString(
    'base64url',
  );
}

/** Whether `sent` is the token, compared in constant time whatever its length. */
export function statusTokenMatches(token: string, sent: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'latin1').digest();
  return timingSafeEqual(digest(token), digest(sent));
}

/** The file naming the daemon's HTTP listener, in the state directory. */
export const statusUrlFile = 'status.json';

/** What {@link statusUrlFile} holds. */
export interface StatusEndpoint {
  /** The HTTP listener's URL, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The daemon's pid when it wrote the file. */
  pid: number;
}

/** The daemon's side: records where it listens (atomically, mode 0600). */
export async function writeStatusEndpoint(stateDir: string, url: string): Promise<void> {
  await new DurableJsonFile<StatusEndpoint>(join(stateDir, statusUrlFile)).write({
    url,
    pid: process.pid,
  });
}

/**
 * The command's side: where the daemon last listened.
 * @throws ENOENT when no daemon ever started on the state directory; SyntaxError on a torn
 *   file (it is never torn: written by rename).
 */
export async function readStatusEndpoint(stateDir: string): Promise<StatusEndpoint> {
  return JSON.parse(await readFile(join(stateDir, statusUrlFile), 'utf8')) as StatusEndpoint;
}
