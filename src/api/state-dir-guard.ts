/**
 * Refuses, in a driver entry sent over the API, a file that lies in tagd's state directory. The
 * state directory holds the sealing key, the token key and the accounts; a driver reads the
 * files it names and reports what it could not parse, so naming one of those files would show
 * an Administrator part of a secret that tagd otherwise never shows anyone. A serial port (a
 * Modbus RTU `path`, an SLCAN `port`) is a file too: a key named there would be opened as a
 * device. Editing the profile file on the host stays unrestricted: whoever can do that can read
 * the state directory anyway.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { ValidationError } from '../errors.js';
import { formatPath } from '../profile/validate-profile.js';

/** Where relative file names are resolved from and what they must stay out of. */
export interface StateDirGuard {
  /** The daemon's state directory. */
  stateDir: string;
  /** The profile's folder: relative file names in a driver entry are resolved from it. */
  profileDir: string;
}

/**
 * @throws ValidationError naming each file field (a key `file` or ending in `File`, and a serial
 *   device: a text `path` or `port`) whose path, as written or after following links, lies
 *   inside the state directory. A relative name is resolved from the profile's folder, and a
 *   device's also from the working directory, where the serial port library opens it.
 */
export function refuseStateDirFiles(entry: unknown, guard: StateDirGuard): void {
  const stateDir = realOrResolved(guard.stateDir);
  const errors: { path: string; message: string }[] = [];
  const isInside = (named: string) =>
    inside(stateDir, named) || inside(stateDir, realOrResolved(named));
  for (const { path, value, device } of fileFields(entry, [])) {
    if (isInside(resolve(guard.profileDir, value)) || (device && isInside(resolve(value)))) {
      errors.push({
        path: formatPath(path),
        message: "Files in tagd's state directory cannot be named through the API.",
      });
    }
  }
  if (errors.length > 0) throw new ValidationError('The request body is invalid.', errors);
}

// A TCP port is a number, and SLCAN over TCP is written socket://host:port: neither is a file.
function* fileFields(
  value: unknown,
  path: (string | number)[],
): Generator<{ path: (string | number)[]; value: string; device: boolean }> {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* fileFields(item, [...path, index]);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'string' && (key === 'file' || key.endsWith('File'))) {
      yield { path: [...path, key], value: item, device: false };
    } else if (
      typeof item === 'string' &&
      (key === 'path' || key === 'port') &&
      !item.startsWith('socket://')
    ) {
      yield { path: [...path, key], value: item, device: true };
    } else {
      yield* fileFields(item, [...path, key]);
    }
  }
}

function inside(folder: string, path: string): boolean {
  const rest = relative(folder, path);
  return rest === '' || (!rest.startsWith('..') && !isAbsolute(rest));
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
