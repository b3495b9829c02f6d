import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { initialAdminPasswordFile } from '../../src/auth/account-service.js';
import { Daemon } from '../../src/daemon.js';
import { demoProfileDocument } from '../../src/demo-profile.js';
import { captureLogs } from './log-capture.js';
import { ManualClock } from './manual-clock.js';
import { tempDir } from './temp-dir.js';

/** Options of {@link demoDaemon}. */
export interface DemoDaemonOptions {
  /** State directory. Default: `<temp>/state`. */
  stateDir?: string;
  /** Changes the demo profile before it is written (or a whole profile to use instead). */
  profile?: ((demo: Record<string, unknown>) => void) | unknown;
  /** Clock of the daemon. Default: a ManualClock at the current time. */
  clock?: ManualClock;
  /** Start it. Default true. */
  start?: boolean;
}

/**
 * The demo profile (or a variant) served by an in-process Daemon on an ephemeral loopback port,
 * from a temporary folder, stopped when the test ends.
 */
export async function demoDaemon(t: ExecutionContext, options: DemoDaemonOptions = {}) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  const demo = await demoProfileDocument();
  let profile: unknown = demo;
  if (typeof options.profile === 'function') options.profile(demo);
  else if (options.profile !== undefined) profile = options.profile;
  await writeFile(profileFile, JSON.stringify(profile));
  const stateDir = options.stateDir ?? join(folder, 'state');
  const logs = captureLogs();
  const clock = options.clock ?? new ManualClock(Date.now());
  const daemon = new Daemon({
    profileFile,
    stateDir,
    logger: logs.logger,
    recentEvents: logs.recentEvents,
    clock,
    listen: { host: '127.0.0.1', port: 0 },
    // The demo's extensions server has the fixed port 8081: tests run side by side.
    extensionsListen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => daemon.stop());
  if (options.start ?? true) await daemon.start();
  return {
    daemon,
    url: daemon.url() as string,
    /** The extensions server's URL, when the profile has one and the daemon was started. */
    extensionsUrl: daemon.extensionsUrl(),
    stateDir,
    profileFile,
    folder,
    logs,
    clock,
  };
}

/**
 * Signs in as the first-start admin of a daemon on `stateDir`, changing its one-time password
 * as a newcomer must; returns an access token (Administrators hold every permission).
 */
export async function adminToken(url: string, stateDir: string): Promise<string> {
  const password = (await readFile(join(stateDir, initialAdminPasswordFile), 'utf8')).trim();
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, string>;
  };
  const first = await post('/api/v2/Users/Authenticate', { username: 'admin', password });
  const changed = await post(
    '/api/v2/Users/Current/ChangePassword',
    { currentPassword: password, newPassword: 'a long new admin password' },
    first.preAuthToken,
  );
  return changed.token as string;
}
