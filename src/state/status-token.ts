/**
 * The local status token: a random secret in `<state>/status.key` (mode 0600, in the 0700 state
 * directory), which only the daemon's user and root can read. The daemon accepts it on
 * `GET /api/v2/Status` alone; `tagd status`, run as root or the tagd user, reads it and sends it
 * as a Bearer token. So the status needs no account and no token an operator must keep, and it
 * grants nothing but the status: no tag values, no configuration, no changes.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
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
