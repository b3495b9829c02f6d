/**
 * `tagd profile export` and `import` (profile-transfer.ts) back up and roll out a profile
 * without its secrets.
 *
 * `tagd profile check FILE`: everything `tagd start` would object to in a profile, listed at
 * once: the schema and cross-field rules, sealed secrets (when the state directory's key is at
 * hand), then the start-up checks the daemon runs (startup-checks.ts): listeners, certificates
 * and every file the profile names — on the parts without errors when the schema found some,
 * so one run lists everything (profile-problems.ts). Exit 0 when tagd would start with every
 * part running, 1 when anything is listed, 2 on a usage error. Warnings (a derived tag or alarm
 * reading a tag no driver of the profile declares, a publisher or history entry naming a
 * collection the profile lacks) are printed to stderr and leave the exit code 0.
 */
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { derivedReferenceWarnings } from '../../drivers/derived/profile-references.js';
import { alarmReferenceWarnings } from '../alarms/alarm-references.js';
import { ProfileFileError, ProfileNotFoundError } from '../errors.js';
import { DurableJsonFile } from '../profile/durable-json-file.js';
import { SecretBox } from '../profile/secret-box.js';
import { listProfileProblems, problemText } from '../profile-problems.js';
import { exportProfile, importProfile } from './profile-transfer.js';
import { CommandFailure, CommandUsageError, resolveStateDir, runCommand } from './state-dir.js';

/** Usage of `tagd profile`, printed with every usage error. */
export const profileUsage = `Usage:
  tagd profile check FILE   list every error in a profile: the schema, sealed secrets, and
                            what tagd start checks (listeners, certificates, the license,
                            DBC, replay and caFile files); exit 0 valid, 1 errors listed;
                            warnings (unknown tags or collections named) do not fail it
  tagd profile export [--profile FILE]
                            print the profile as written, every secret as ********
  tagd profile import FILE [--profile TARGET] [--no-reload]
                            validate FILE and save it as the profile; a ******** secret keeps
                            the value TARGET has at the same path (refused, listing them, when
                            it has none); plaintext secrets are sealed; then the tagd running
                            on TAGD_STATE_DIR reloads (SIGHUP): only what changed restarts

Sealed secrets are opened with the key of TAGD_STATE_DIR (default ./var) when it has one.
The profile is --profile, else TAGD_PROFILE, else config/profile.json (as for tagd start).
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
      case 'export': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { profile: { type: 'string' } },
          allowPositionals: true,
          strict: true,
        });
        if (positionals.length > 0) throw new CommandUsageError('usage: tagd profile export');
        const masked = await exportProfile(profilePath(values.profile));
        process.stdout.write(`${JSON.stringify(masked, null, 2)}\n`);
        return;
      }
      case 'import': {
        const { values, positionals } = parseArgs({
          args: rest,
          options: { profile: { type: 'string' }, 'no-reload': { type: 'boolean' } },
          allowPositionals: true,
          strict: true,
        });
        const [file, ...extra] = positionals;
        if (file === undefined || extra.length > 0) {
          throw new CommandUsageError('usage: tagd profile import FILE');
        }
        return importInto(resolve(file), profilePath(values.profile), !values['no-reload']);
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

// The profile `tagd start` would run, so export and import work on the daemon's file.
function profilePath(option: string | undefined): string {
  return resolve(option ?? process.env.TAGD_PROFILE ?? 'config/profile.json');
}

async function importInto(file: string, target: string, reload: boolean): Promise<void> {
  let document: unknown;
  try {
    document = await new DurableJsonFile<unknown>(file).read();
  } catch (error) {
    if (error instanceof ProfileNotFoundError) throw new CommandFailure(`No file at ${file}.`);
    throw error;
  }
  const stateDir = resolveStateDir();
  const secretBox = await SecretBox.openExisting(stateDir, process.env.CREDENTIALS_DIRECTORY);
  const outcome = await importProfile(document, target, { stateDir, secretBox, reload });
  const lines = [`${target}: imported from ${file}.`];
  if (outcome.kept.length > 0) lines.push(`Kept the stored secrets: ${outcome.kept.join(', ')}.`);
  if (outcome.sealed.length > 0) lines.push(`Sealed: ${outcome.sealed.join(', ')}.`);
  if (outcome.leftPlain.length > 0) {
    lines.push(
      `No sealing key in ${stateDir} yet: tagd seals ${outcome.leftPlain.join(', ')} when it loads the profile.`,
    );
  }
  if (outcome.reloadedPid !== undefined) {
    lines.push(
      `tagd (pid ${outcome.reloadedPid}) is reloading the profile; its log says what restarted (journalctl -u tagd).`,
    );
  } else if (outcome.unsignalledPid !== undefined) {
    lines.push(
      `tagd (pid ${outcome.unsignalledPid}) runs as another account: apply the profile with sudo systemctl reload tagd.`,
    );
  } else if (reload) {
    lines.push(`No tagd runs on ${stateDir}: the profile applies at its next start.`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
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
  const report = await listProfileProblems(document, {
    secretBox,
    profileFolder: dirname(path),
    // Warnings leave the profile valid: a derived tag reading a tag no driver declares is Bad
    // (NotFound) until the tag appears, which may be by design (a CAN signal, a later driver).
    referenceWarnings: (profile) => [
      ...derivedReferenceWarnings(profile),
      ...alarmReferenceWarnings(profile),
    ],
  });
  if (report.uncheckedSecrets.length > 0) {
    process.stderr.write(
      `note: no sealing key in TAGD_STATE_DIR, so these sealed secrets were not checked: ${report.uncheckedSecrets.join(', ')}\n`,
    );
  }
  for (const warning of report.warnings) {
    process.stderr.write(`warning: ${warning.path}: ${warning.message}\n`);
  }
  if (report.startupChecks === 'valid-parts') {
    process.stderr.write(
      'note: the start-up checks (listeners, certificates, files the profile names) ran on the parts of the profile without errors.\n',
    );
  } else if (report.startupChecks === 'skipped') {
    process.stderr.write(
      'note: the start-up checks (listeners, certificates, files the profile names) need every sealed secret opened and a valid part of the profile; they were skipped.\n',
    );
  }
  const { problems } = report;
  if (problems.length > 0) {
    throw new CommandFailure(
      `Profile ${path} is invalid (${problems.length} error${problems.length === 1 ? '' : 's'}).`,
      problems.map((problem) => `${problem.path}: ${problemText(problem)}`),
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
