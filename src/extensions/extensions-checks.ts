/**
 * The start-up checks of the `extensions` section that only it has: every app's folder is a
 * readable directory, and no two listeners of tagd share a port. (Its listeners' loopback rule
 * and HTTPS files are checked with the API listeners', in startup-checks.ts.)
 *
 * An app whose folder is unusable is left out (its path answers 404) and the rest of tagd
 * runs, as a driver with an unusable file is: a misspelt UI folder must not stop the drivers and
 * the history. A shared port refuses the start: the bind would fail anyway, and as a
 * configuration error systemd does not restart it every 2 s.
 */
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { FieldError } from '../errors.js';
import type { ExtensionsConfig } from './extensions-config.js';

/** A listener of tagd, named by its profile path, for the port check. */
export interface NamedListener {
  /** Profile path, e.g. `server.http`. */
  at: string;
  host: string;
  /** 0 picks a free port, which never collides. */
  port: number;
}

/** A problem of the `extensions` section and what start does about it. */
export interface ExtensionsProblem extends FieldError {
  /** `app-left-out`: that app (index in `apps`) is not served; `refused`: no start. */
  effect: 'app-left-out' | 'refused';
  /** Index in `extensions.apps` of the app at fault, for `app-left-out`. */
  app?: number;
}

/**
 * Lists the problems of the `extensions` section: app folders that are missing, not folders or
 * not readable, and ports shared with another listener on an overlapping address.
 * @param profileFolder folder relative app folders are resolved from.
 * @param listeners every listener tagd would bind, the extension ones included.
 */
export async function checkExtensions(
  config: ExtensionsConfig,
  profileFolder: string,
  listeners: readonly NamedListener[],
): Promise<ExtensionsProblem[]> {
  const problems: ExtensionsProblem[] = [];
  for (const [index, app] of config.apps.entries()) {
    const problem = await folderProblem(resolve(profileFolder, app.folder), app.name);
    if (problem) {
      problems.push({
        path: `extensions.apps[${index}].folder`,
        message: problem,
        effect: 'app-left-out',
        app: index,
      });
    }
  }
  for (const [index, listener] of listeners.entries()) {
    if (!listener.at.startsWith('extensions.') || listener.port === 0) continue;
    const other = listeners.find(
      (candidate, at) =>
        at !== index && candidate.port === listener.port && overlap(candidate.host, listener.host),
    );
    if (other) {
      problems.push({
        path: `${listener.at}.port`,
        message: `Port ${listener.port} is taken by ${other.at} (${other.host}:${other.port}): give the extensions server a port of its own.`,
        effect: 'refused',
      });
    }
  }
  return problems;
}

async function folderProblem(folder: string, name: string): Promise<string | undefined> {
  try {
    if (!(await stat(folder)).isDirectory()) {
      return `The folder of app ${name}, ${folder}, is not a directory.`;
    }
    await access(folder, fsConstants.R_OK | fsConstants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return `The folder of app ${name}, ${folder}, does not exist.`;
    }
    if (code === 'EACCES' || code === 'EPERM') {
      return `The folder of app ${name}, ${folder}, cannot be read by tagd (permission denied).`;
    }
    return `The folder of app ${name}, ${folder}, cannot be used: ${(error as Error).message}.`;
  }
}

const wildcards = new Set(['0.0.0.0', '::', '[::]']);

// Two binds of one port clash when the addresses are the same or either is a wildcard.
function overlap(a: string, b: string): boolean {
  return a === b || wildcards.has(a) || wildcards.has(b);
}
