import { spawn } from 'node:child_process';
import { chown, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { StateDirLockedError, StateDirUnusableError } from '../../src/errors.js';
import { isConfigError } from '../../src/main.js';
import { currentBootId } from '../../src/state/process-alive.js';
import {
  processStartTime,
  StateDirLock,
  stateDirLockName,
  unusable,
} from '../../src/state/state-dir-lock.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The pid of a process that has exited (and been reaped), so no process has it for now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

test('a second holder is refused with the first one pid; after release it may take it', async (t) => {
  const stateDir = join(await tempDir(t), 'state');
  const first = new StateDirLock(stateDir);
  await first.acquire();
  const record = JSON.parse(await readFile(join(stateDir, stateDirLockName), 'utf8'));
  t.is(record.pid, process.pid);
  t.is(record.startTime, processStartTime(process.pid));

  const second = new StateDirLock(stateDir);
  const error = await t.throwsAsync(second.acquire(), { instanceOf: StateDirLockedError });
  t.is(error?.code, 'state-dir-locked');
  t.is((error as StateDirLockedError).holderPid, process.pid);
  t.regex(error?.message ?? '', new RegExp(`\\(pid ${process.pid}\\)`));

  await first.release();
  t.deepEqual(await readdir(stateDir), [], 'the lock file is gone, no temporary left');
  await second.acquire();
  await second.release();
});

test('a lock left by a dead process is taken over', async (t) => {
  const stateDir = await tempDir(t);
  await writeFile(join(stateDir, stateDirLockName), JSON.stringify({ pid: await deadPid() }));
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  t.is(JSON.parse(await readFile(lock.file, 'utf8')).pid, process.pid);
  await lock.release();
});

test('a reused pid (same pid, other start time: a reboot or container restart) is not the holder', async (t) => {
  const stateDir = await tempDir(t);
  // This very process runs under the recorded pid, but it is not the process that wrote it.
  await writeFile(
    join(stateDir, stateDirLockName),
    JSON.stringify({ pid: process.pid, startTime: '1' }),
  );
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  t.is(JSON.parse(await readFile(lock.file, 'utf8')).startTime, processStartTime(process.pid));
  await lock.release();
});

test('a garbled lock file is taken over; a live foreign holder is refused', async (t) => {
  const stateDir = await tempDir(t);
  await writeFile(join(stateDir, stateDirLockName), 'not json');
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  await lock.release();
  // The parent of this test process runs: its recorded start time matches.
  await writeFile(
    join(stateDir, stateDirLockName),
    JSON.stringify({ pid: process.ppid, startTime: processStartTime(process.ppid) }),
  );
  const error = await t.throwsAsync(new StateDirLock(stateDir).acquire());
  t.is((error as StateDirLockedError).holderPid, process.ppid);
});

test('release leaves a lock that another process took meanwhile', async (t) => {
  const stateDir = await tempDir(t);
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  const other = JSON.stringify({ pid: process.ppid, startTime: processStartTime(process.ppid) });
  await writeFile(lock.file, other);
  await lock.release();
  t.is(await readFile(lock.file, 'utf8'), other);
});

test('the lock records the boot id; a lock from another boot is taken over though its pid runs', async (t) => {
  const stateDir = await tempDir(t);
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  t.is(JSON.parse(await readFile(lock.file, 'utf8')).bootId, currentBootId());
  await lock.release();
  // A live process holds the pid now (our parent), but the lock was written before a reboot.
  await writeFile(
    join(stateDir, stateDirLockName),
    JSON.stringify({ pid: process.ppid, bootId: '00000000-0000-4000-8000-000000000000' }),
  );
  if (currentBootId() === undefined) {
    t.log('no boot id on this system: only the pid and start time decide');
    return;
  }
  await lock.acquire();
  t.is(JSON.parse(await readFile(lock.file, 'utf8')).pid, process.pid);
  await lock.release();
});

test('our own pid with no start time recorded (a container restarted as PID 1) is a stale lock', async (t) => {
  const stateDir = await tempDir(t);
  await writeFile(join(stateDir, stateDirLockName), JSON.stringify({ pid: process.pid }));
  const lock = new StateDirLock(stateDir);
  await lock.acquire();
  t.is(JSON.parse(await readFile(lock.file, 'utf8')).startTime, processStartTime(process.pid));
  // Held by this process now: a second lock here is refused, own pid or not.
  const error = await t.throwsAsync(new StateDirLock(stateDir).acquire(), {
    instanceOf: StateDirLockedError,
  });
  t.is((error as StateDirLockedError).holderPid, process.pid);
  await lock.release();
});

test("another account's running daemon (EPERM, start time not recorded) keeps its lock", async (t) => {
  if (process.getuid?.() !== 0) {
    t.log('needs root, to run the contender as another account');
    t.pass();
    return;
  }
  const nobody = 65_534;
  const stateDir = await tempDir(t);
  await chown(stateDir, nobody, nobody);
  // This test process (root) is the holder: the contender, as nobody, may not signal it.
  await writeFile(join(stateDir, stateDirLockName), JSON.stringify({ pid: process.pid }));
  const module = new URL('../../src/state/state-dir-lock.ts', import.meta.url).href;
  const script = `const { StateDirLock } = await import(${JSON.stringify(module)});
try { await new StateDirLock(${JSON.stringify(stateDir)}).acquire(); console.log('acquired'); }
catch (error) { console.log(error.code, error.holderPid); }`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    uid: nobody,
    gid: nobody,
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  await new Promise((resolve) => child.on('close', resolve));
  t.is(output.trim(), `state-dir-locked ${process.pid}`);
});

test('a state directory tagd cannot create or write is a configuration error, not a passing failure', async (t) => {
  // A path through a file: fails for root too (permissions would not, here).
  const folder = await tempDir(t);
  await writeFile(join(folder, 'file'), '');
  const stateDir = join(folder, 'file', 'state');
  const error = await t.throwsAsync(new StateDirLock(stateDir).acquire(), {
    instanceOf: StateDirUnusableError,
  });
  t.is(error?.code, 'state-dir-unusable');
  t.true(isConfigError(error), 'exit 78: systemd does not restart it every 2 s');
  t.regex(error?.message ?? '', new RegExp(`^tagd cannot use the state directory ${stateDir}: `));
  const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code });
  for (const code of ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR']) {
    const mapped = unusable('/var/lib/tagd', errno(code));
    t.true(mapped instanceof StateDirUnusableError, code);
    t.true(isConfigError(mapped), code);
  }
  // These may clear: passed on as they are, so tagd exits 1 and systemd retries.
  for (const code of ['ENOSPC', 'EIO']) {
    const mapped = unusable('/var/lib/tagd', errno(code));
    t.is((mapped as NodeJS.ErrnoException).code, code);
    t.false(isConfigError(mapped), code);
  }
});
