/**
 * `tagd profile check FILE`: everything `tagd start` would object to in a profile, listed at
 * once: the schema and cross-field rules, sealed secrets (when the state directory's key is at
 * hand), then the start-up checks the daemon runs (startup-checks.ts): listeners, certificates
 * and every file the profile names. Exit 0 when tagd would start with every part running,
 * 1 when anything is listed, 2 on a usage error.
 */
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FieldError } from '../errors.js';
import { ProfileFileError, ProfileNotFoundError } from '../errors.js';
import { checkProfile } from '../profile/check-profile.js';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { SecretBox } from '../profile/secret-box.js';
import { checkStartup, effectText } from '../startup-checks.js';
import { CommandFailure, CommandUsageError, resolveStateDir, runCommand } from './state-dir.js';

/** Usage of `tagd profile`, printed with every usage error. */
export const profileUsage = `Usage:
  tagd profile check FILE   list every error in a profile: the schema, sealed secrets, and
                            what tagd start checks (listeners, certificates, the license,
                            DBC, replay and caFile files); exit 0 valid, 1 errors listed

Sealed secrets are opened with the key of TAGD_STATE_DIR (default ./var) when it has one.
`;

/** Runs `tagd profile ARGS…`; sets process.exitCode (0 valid, 1 errors, 2 usage error). */
export function profileCommand(args: string[]): Promise<void> {
  return runCommand(profileUsage, async () => {
    const [sub, ...rest] = args;
    switch (sub) {
      case 'check': {
        const { positionals } = parseArgs({
          args: rest,
          options: {},
          allowPositionals: true,
          strict: true,
        });
        const [file, ...extra] = positionals;
        if (file === undefined || extra.length > 0) {
          throw new CommandUsageError('usage: tagd profile check FILE');
        }
        return check(resolve(file));
      }
      case undefined:
      case 'help':
        process.stdout.write(profileUsage);
        return;
      default:
        throw new CommandUsageError(`unknown profile command '${sub}'`);
    }
  });
}

async function check(path: string): Promise<void> {
  let document: unknown;
  try {
    document = await new DurableJsonFile<unknown>(path).read();
  } catch (error) {
    // Named as given here: "pass --profile" (the daemon's hint) means nothing to this command.
    if (error instanceof ProfileNotFoundError) throw new CommandFailure(`No profile at ${path}.`);
    if (error instanceof ProfileFileError) throw new CommandFailure(error.message);
    throw error;
  }
  const secretBox = await SecretBox.openExisting(
    resolveStateDir(),
    process.env.CREDENTIALS_DIRECTORY,
  );
  const { errors, uncheckedSecrets, profile } = checkProfile(document, secretBox);
  if (uncheckedSecrets.length > 0) {
    process.stderr.write(
      `note: no sealing key in TAGD_STATE_DIR, so these sealed secrets were not checked: ${uncheckedSecrets.join(', ')}\n`,
    );
  }
  const problems: FieldError[] = [...errors];
  if (profile) {
    const found = await checkStartup(profile, { profileFolder: dirname(path) });
    for (const problem of found) {
      problems.push({
        path: problem.path,
        message: `${problem.message} (${effectText[problem.effect]})`,
      });
    }
  } else if (errors.length === 0) {
    process.stderr.write(
      'note: the start-up checks (listeners, certificates, files the profile names) need every sealed secret opened; they were skipped.\n',
    );
  }
  if (problems.length > 0) {
    throw new CommandFailure(
      `Profile ${path} is invalid (${problems.length} error${problems.length === 1 ? '' : 's'}).`,
      problems.map((problem) => `${problem.path}: ${problem.message}`),
    );
  }
  const count = (value: unknown) => (Array.isArray(value) ? value.length : 0);
  const summary = document as {
    drivers?: { tags?: unknown[] }[];
    collections?: unknown[];
    publishers?: { webhooks?: unknown[] };
  };
  const drivers = summary.drivers ?? [];
  const tags = drivers.reduce((sum, driver) => sum + count(driver.tags), 0);
  process.stdout.write(
    `${path}: valid (${drivers.length} drivers, ${tags} tags, ${count(summary.collections)} collections, ${count(summary.publishers?.webhooks)} webhook publishers)\n`,
  );
}
