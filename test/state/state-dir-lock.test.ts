import { spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { StateDirLockedError } from '../../src/errors.js';
import {
  processStartTime,
  StateDirLock,
  stateDirLockName,
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
