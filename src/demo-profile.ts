import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { packageRoot } from './package-root.js';

/** File name of the demo profile copy in the state directory. */
export const demoProfileFileName = 'demo-profile.json';

/**
 * Makes the profile `tagd start --demo` runs: a copy of config/demo.json in the state
 * directory, made once. tagd seals the secrets of the profile it runs (the demo publisher's
 * destination URL) with this installation's key and saves the file back, so it must run from
 * its own copy, never from the committed file.
 * @returns the path of the copy.
 */
export async function prepareDemoProfile(stateDir: string): Promise<string> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const target = join(stateDir, demoProfileFileName);
  const profile = await demoProfileDocument();
  try {
    await writeFile(target, `${JSON.stringify(profile, null, 2)}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // Made on an earlier run: keep it, with whatever the user changed through the API.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return target;
}

/**
 * config/demo.json with every file it names (schema, license, CAN DBC and replay log) made
 * absolute, so the document works from any folder.
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
  return profile;
}
