/**
 * `tagd profile export` and `tagd profile import`: the profile as a file to back up or roll out
 * to a fleet, with no secret in it.
 *
 * Export prints the profile file as written (not with defaults filled in), every secret, sealed
 * or not, replaced by `********`. It needs no key.
 *
 * Import validates a document (the schema, and the start-up checks that would refuse a start,
 * with relative paths resolved from the target's folder) and saves it over the target profile
 * atomically. A secret that
 * holds `********` keeps the value the target has at the same path (sealed as it is), so an
 * export imported again on the same gateway round-trips. Where the target has nothing at that
 * path (another gateway, a publisher added since), the import is refused listing every secret
 * that must be supplied in plaintext. Plaintext secrets are sealed with the state directory's
 * key; when there is no key yet, the daemon seals them at its next load. Last, the daemon
 * running on the state directory (its lock names its pid) is sent SIGHUP, which reloads the
 * profile: only what changed restarts. That daemon reloads the profile file it was started
 * with, so import into that file (`--profile`, or TAGD_PROFILE as for `tagd start`).
 */

import { dirname } from 'node:path';
import { ProfileNotFoundError } from '../errors.js';
import { checkProfile } from '../profile/check-profile.js';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { profileSchema } from '../profile/schema.js';
import type { SecretBox } from '../profile/secret-box.js';
import { isSealed } from '../profile/secret-box.js';
import { findSecrets, maskSecrets, secretMask, setAtPath } from '../profile/secret-fields.js';
import { formatPath } from '../profile/validate-profile.js';
import { checkStartup } from '../startup-checks.js';
import { runningDaemonPid } from '../state/state-dir-lock.js';
import { CommandFailure } from './state-dir.js';

/** The profile file as written, every secret masked. */
export async function exportProfile(target: string): Promise<unknown> {
  const document = await new DurableJsonFile<unknown>(target).read();
  return maskSecrets(profileSchema, document);
}

/** What an import did. */
export interface ImportOutcome {
  /** Paths of masked secrets that kept the target's value. */
  kept: string[];
  /** Paths of plaintext secrets sealed with the state directory's key. */
  sealed: string[];
  /** Paths of plaintext secrets left for the daemon to seal (no key yet). */
  leftPlain: string[];
  /** The pid of the daemon told to reload (SIGHUP), or undefined when none runs. */
  reloadedPid: number | undefined;
  /** The pid of a running daemon this account may not signal (EPERM): reload it otherwise. */
  unsignalledPid?: number;
}

/** Options of {@link importProfile}. */
export interface ImportOptions {
  /** The state directory: its key seals, its lock names the daemon to reload. */
  stateDir: string;
  /** The key, when there is one (SecretBox.openExisting). */
  secretBox: SecretBox | undefined;
  /** Send the running daemon SIGHUP. Default true. */
  reload?: boolean;
}

/**
 * Imports `document` over the profile file `target`; see the module comment.
 * @throws CommandFailure listing the secrets to supply, or every validation error; nothing is
 *   written then.
 */
export async function importProfile(
  document: unknown,
  target: string,
  options: ImportOptions,
): Promise<ImportOutcome> {
  const file = new DurableJsonFile<unknown>(target);
  const existing = await file.read().catch((error: unknown) => {
    if (error instanceof ProfileNotFoundError) return undefined;
    throw error;
  });
  const incoming = structuredClone(document);
  const kept: string[] = [];
  const missing: string[] = [];
  for (const found of findSecrets(profileSchema, incoming)) {
    if (found.value !== secretMask) continue;
    const stored = valueAt(existing, found.path);
    if (typeof stored === 'string' && stored !== secretMask) {
      setAtPath(incoming, found.path, stored);
      kept.push(formatPath(found.path));
    } else {
      missing.push(formatPath(found.path));
    }
  }
  if (missing.length > 0) {
    throw new CommandFailure(
      `${missing.length} secret${missing.length === 1 ? ' is' : 's are'} masked in the import and ${target} holds none at ${missing.length === 1 ? 'its path' : 'their paths'}: write ${missing.length === 1 ? 'it' : 'them'} in plaintext into the file to import (tagd seals them); nothing was changed.`,
      missing,
    );
  }
  const { errors, profile } = checkProfile(incoming, options.secretBox);
  // What would refuse the reload (and the next start) refuses the import; the rest (a driver
  // left out for a missing file) is the daemon's to report, as at start.
  if (profile) {
    const found = await checkStartup(profile, { profileFolder: dirname(target) });
    for (const problem of found.filter((problem) => problem.effect === 'refused')) {
      errors.push({ path: problem.path, message: problem.message });
    }
  }
  if (errors.length > 0) {
    throw new CommandFailure(
      `The import is invalid (${errors.length} error${errors.length === 1 ? '' : 's'}); nothing was changed.`,
      errors.map((error) => `${error.path}: ${error.message}`),
    );
  }
  const sealed: string[] = [];
  const leftPlain: string[] = [];
  for (const found of findSecrets(profileSchema, incoming)) {
    if (isSealed(found.value)) continue;
    if (options.secretBox) {
      setAtPath(incoming, found.path, options.secretBox.seal(found.value));
      sealed.push(formatPath(found.path));
    } else {
      leftPlain.push(formatPath(found.path));
    }
  }
  await file.write(incoming);
  let reloadedPid: number | undefined;
  if (options.reload ?? true) {
    const pid = await runningDaemonPid(options.stateDir);
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGHUP');
        reloadedPid = pid;
      } catch (error) {
        // Saved all the same: another account's daemon is reloaded by systemctl reload tagd.
        if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
        return { kept, sealed, leftPlain, reloadedPid, unsignalledPid: pid };
      }
    }
  }
  return { kept, sealed, leftPlain, reloadedPid };
}

function valueAt(document: unknown, path: readonly (string | number)[]): unknown {
  let node = document;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}
