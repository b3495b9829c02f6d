import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { packageRoot } from './package-root.js';
import { DurableJsonFile } from './profile/durable-json-file.js';

/** File name of the demo profile copy in the state directory. */
export const demoProfileFileName = 'demo-profile.json';

/**
 * Top-level sections config/demo.json gained after copies of it were made: a copy that lacks
 * one gets the committed section added at the next `tagd start --demo`, so an existing state
 * directory shows what the demo now shows. Only sections the API cannot remove belong here
 * (else a removal would be undone at each start); nothing already in a copy is ever changed.
 */
export const demoSectionsAddedLater: readonly string[] = ['extensions', 'alarms', 'assistant'];

/** The demo profile copy `tagd start --demo` runs, as {@link prepareDemoProfile} left it. */
export interface DemoProfileCopy {
  /** Path of the copy in the state directory. */
  file: string;
  /** Sections of {@link demoSectionsAddedLater} just added to an older copy; usually empty. */
  added: string[];
}

/**
 * Makes the profile `tagd start --demo` runs: a copy of config/demo.json in the state
 * directory, made once. tagd seals the secrets of the profile it runs (the demo publisher's
 * destination URL) with this installation's key and saves the file back, so it must run from
 * its own copy, never from the committed file. A copy made earlier is kept, with whatever the
 * user changed through the API; only the sections of {@link demoSectionsAddedLater} it lacks
 * are added.
 */
export async function prepareDemoProfile(stateDir: string): Promise<DemoProfileCopy> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const target = join(stateDir, demoProfileFileName);
  const profile = await demoProfileDocument();
  try {
    await writeFile(target, `${JSON.stringify(profile, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
    return { file: target, added: [] };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { file: target, added: await addLaterSections(target, profile) };
}

// Adds to an existing copy the later sections it lacks. A copy that cannot be read or parsed is
// left as it is: the daemon reports it, with line and column, and never overwrites it.
async function addLaterSections(target: string, demo: Record<string, unknown>): Promise<string[]> {
  const file = new DurableJsonFile<unknown>(target);
  let copy: unknown;
  try {
    copy = await file.read();
  } catch {
    return [];
  }
  if (copy === null || typeof copy !== 'object' || Array.isArray(copy)) return [];
  const document = copy as Record<string, unknown>;
  const added = demoSectionsAddedLater.filter(
    (section) => !(section in document) && demo[section] !== undefined,
  );
  if (added.length === 0) return [];
  for (const section of added) document[section] = demo[section];
  await file.write(document);
  return added;
}

/**
 * config/demo.json with every file and folder it names (schema, license, CAN DBC and replay
 * log, the extension apps' folders) made absolute, so the document works from any folder: the
 * copy lives in the state directory, far from config/.
 */
export async function demoProfileDocument(): Promise<Record<string, unknown>> {
  const profile = JSON.parse(await readFile(join(packageRoot, 'config/demo.json'), 'utf8'));
  profile.$schema = join(packageRoot, 'config/profile.schema.json');
  if (profile.license?.file)
    profile.license.file = join(packageRoot, 'config', profile.license.file);
  for (const driver of profile.drivers ?? []) {
    if (driver.type !== 'can') continue;
    driver.dbcFile = resolve(packageRoot, 'config', driver.dbcFile);
    if (driver.transport?.kind === 'replay') {
      driver.transport.file = resolve(packageRoot, 'config', driver.transport.file);
    }
  }
  for (const app of profile.extensions?.apps ?? []) {
    app.folder = resolve(packageRoot, 'config', app.folder);
  }
  return profile;
}
