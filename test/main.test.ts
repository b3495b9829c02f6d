import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { demoProfileDocument } from '../src/demo-profile.js';
import {
  ListenerError,
  ProfileFileError,
  ServiceBusyError,
  StateDirLockedError,
  StateDirUnusableError,
} from '../src/errors.js';
import { exitCodes, isConfigError } from '../src/main.js';
import { repoRoot } from './helpers/tagd-process.js';
import { tempDir } from './helpers/temp-dir.js';

test('errors a restart cannot fix are configuration errors (exit 78); the others exit 1', (t) => {
  t.is(exitCodes.config, 78);
  t.true(isConfigError(new ProfileFileError('/c.pem', 'not-a-file', 'FIFO')));
  t.true(isConfigError(new StateDirLockedError('/var/lib/tagd', 42, '/var/lib/tagd/daemon.lock')));
  t.true(
    isConfigError(new StateDirUnusableError('/var/lib/tagd', 'permission denied')),
    'a state directory tagd cannot write stays so after a restart',
  );
  const bind = (code: string) =>
    new ListenerError('Cannot listen', { cause: Object.assign(new Error(code), { code }) });
  t.true(isConfigError(bind('EACCES')), 'a privileged port stays refused after a restart');
  t.false(isConfigError(bind('EADDRINUSE')), 'a port in use may be free after a restart');
  t.false(isConfigError(bind('EADDRNOTAVAIL')), 'an address may come up after a restart');
  t.false(isConfigError(new ServiceBusyError('busy')));
  t.false(isConfigError(new Error('anything else')));
});

test('an unhandled rejection is logged and tagd keeps running; SIGTERM still stops it cleanly', async (t) => {
  t.timeout(300_000);
  const dir = await tempDir(t);
  const profileFile = join(dir, 'profile.json');
  await writeFile(profileFile, JSON.stringify(await demoProfileDocument()));
  // The real runDaemon with its process handlers; once ready, a promise nobody waits for fails,
  // as a component's detached work would if it did not catch its own failure.
  const script = `
    const { runDaemon } = await import(${JSON.stringify(fileURLToPath(new URL('../src/main.ts', import.meta.url)))});
    const { createLogger } = await import(${JSON.stringify(fileURLToPath(new URL('../src/logger.ts', import.meta.url)))});
    await runDaemon({
      profileFile: process.env.TAGD_PROFILE,
      stateDir: process.env.TAGD_STATE_DIR,
      logger: createLogger({ pretty: false }),
      listen: { host: '127.0.0.1', port: 0 },
      extensionsListen: { host: '127.0.0.1', port: 0 },
    });
    Promise.reject(new Error('a promise nobody waits for'));
  `;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '--eval', script],
    {
      cwd: repoRoot,
      env: { ...process.env, TAGD_PROFILE: profileFile, TAGD_STATE_DIR: join(dir, 'state') },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stdout = '';
  const lines: Record<string, unknown>[] = [];
  const waiters: { msg: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
    const complete = stdout.split('\n');
    stdout = complete.pop() ?? '';
    for (const text of complete) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.msg === line.msg)) waiter.resolve(line);
    }
  });
  // Ends on the line, or fails at once when the process exits first.
  const logged = (msg: string) =>
    Promise.race([
      new Promise<Record<string, unknown>>((resolve) => {
        const seen = lines.find((line) => line.msg === msg);
        if (seen) resolve(seen);
        else waiters.push({ msg, resolve });
      }),
      exited.then((code) => {
        throw new Error(`exited (${code}) before '${msg}'`);
      }),
    ]);

  const ready = await logged('tagd ready');
  const rejection = await logged(
    'unhandled promise rejection (a bug: please report it); tagd keeps running',
  );
  t.is(rejection.level, 50);
  t.regex(JSON.stringify(rejection.err), /a promise nobody waits for/);
  const health = await fetch(`${ready.url}/healthz`);
  t.is(health.status, 200, 'the daemon still answers');
  t.is(child.exitCode, null);
  child.kill('SIGTERM');
  t.is(await exited, 0, 'and stops cleanly');
});
