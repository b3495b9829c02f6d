import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import {
  currentBootId,
  processExists,
  processStartTime,
  type SignalZero,
  writerRuns,
} from '../../src/state/process-alive.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A signal-0 sender that fails the way the kernel does, with `code`. */
const failing =
  (code: string): SignalZero =>
  () => {
    throw Object.assign(new Error(code), { code });
  };

/** The pid of a process that has exited (and been reaped), so no process has it for now. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid as number;
}

test('a process exists unless signal 0 says ESRCH: EPERM (another account, hidden /proc) is alive', async (t) => {
  t.true(processExists(process.ppid));
  t.false(processExists(await deadPid()));
  t.false(processExists(0));
  t.false(processExists(-1));
  t.true(processExists(4242, failing('EPERM')));
  t.false(processExists(4242, failing('ESRCH')));
});

test('the boot id is read from the kernel file, trimmed; a missing file gives undefined', async (t) => {
  const folder = await tempDir(t);
  await writeFile(join(folder, 'boot_id'), 'b1a2c3d4-0000-4000-8000-000000000001\n');
  t.is(currentBootId(join(folder, 'boot_id')), 'b1a2c3d4-0000-4000-8000-000000000001');
  t.is(currentBootId(join(folder, 'none')), undefined);
  t.regex(currentBootId() ?? 'no /proc here', /^[0-9a-f-]{36}$|^no \/proc here$/);
});

test('a writer another account runs (EPERM) still runs when its start time is hidden', (t) => {
  const hidden = () => undefined;
  t.true(writerRuns({ pid: 4242 }, { signalZero: failing('EPERM'), startTime: hidden }));
  t.true(
    writerRuns(
      { pid: 4242, startTime: '100' },
      { signalZero: failing('EPERM'), startTime: hidden },
    ),
  );
  // Visible start time that differs: the pid was reused, whoever runs it now.
  t.false(
    writerRuns(
      { pid: 4242, startTime: '100' },
      { signalZero: failing('EPERM'), startTime: () => '200' },
    ),
  );
  t.false(writerRuns({ pid: 4242 }, { signalZero: failing('ESRCH') }));
});

test('our own pid is a live writer only when this process wrote the record', (t) => {
  const record = { pid: process.pid, startTime: processStartTime(process.pid) };
  t.false(writerRuns(record), 'a new process that got the pid of the one that wrote it');
  t.false(writerRuns({ pid: process.pid }), 'even with no start time recorded');
  t.true(writerRuns(record, { ownRecord: true }));
});

test('a record from another boot is stale even though its pid runs now', (t) => {
  const live = { pid: process.ppid, startTime: processStartTime(process.ppid) };
  t.true(writerRuns({ ...live, bootId: 'boot-a' }, { bootId: 'boot-a' }));
  t.false(writerRuns({ ...live, bootId: 'boot-a' }, { bootId: 'boot-b' }));
  t.false(writerRuns({ pid: process.ppid, bootId: 'boot-a' }, { bootId: 'boot-b' }));
  // Unknown on either side: the other checks decide.
  t.true(writerRuns(live, { bootId: 'boot-b' }));
  t.true(writerRuns({ ...live, bootId: 'boot-a' }, { bootId: undefined }));
});
