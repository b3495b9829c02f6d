import { spawnSync } from 'node:child_process';
import { access, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { withFileLock } from '../../src/state/file-lock.js';
import { currentBootId } from '../../src/state/process-alive.js';
import { tempDir } from '../helpers/temp-dir.js';

test('holders never overlap and the lock file is gone afterwards', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  let inside = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: 10 }, () =>
      withFileLock(lock, async () => {
        inside++;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside--;
      }),
    ),
  );
  t.is(most, 1);
  await t.throwsAsync(() => access(lock));
});

test('a lock left by a process that no longer exists is taken over', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  const gone = spawnSync(process.execPath, [
    '-e',
    'process.stdout.write(String(process.pid))',
  ]).stdout.toString();
  await writeFile(lock, gone);
  t.is(await withFileLock(lock, async () => 'ran', { timeoutMs: 500 }), 'ran');
});

test('a lock held by a live process times out, and the work does not run', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  // The parent of this test process: alive for the whole test, and not us.
  await writeFile(lock, String(process.ppid));
  let ran = false;
  await t.throwsAsync(
    () =>
      withFileLock(
        lock,
        async () => {
          ran = true;
        },
        { timeoutMs: 100 },
      ),
    { message: /Timed out waiting for the lock/, code: 'busy' } as never,
  );
  t.false(ran);
});

test('a lock holding our own pid is a leftover of an earlier process and is taken over', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  await writeFile(lock, String(process.pid));
  t.is(await withFileLock(lock, async () => 'ran', { timeoutMs: 200 }), 'ran');
});

test('an empty lock is taken over only once it is older than the grace period', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  await writeFile(lock, '');
  await t.throwsAsync(() => withFileLock(lock, async () => 'ran', { timeoutMs: 100 }), {
    code: 'busy',
  } as never);
  const old = new Date(Date.now() - 10_000);
  await utimes(lock, old, old);
  t.is(await withFileLock(lock, async () => 'ran', { timeoutMs: 200 }), 'ran');
});

test('the lock holds the pid and the boot id; a lock from another boot is taken over though its pid runs', async (t) => {
  const lock = join(await tempDir(t), 'x.lock');
  const bootId = currentBootId();
  const written = await withFileLock(lock, () => readFile(lock, 'utf8'));
  t.regex(written, new RegExp(`^${process.pid}\n${bootId ?? ''}\n[0-9a-f]{16}\n$`));
  if (bootId === undefined) {
    t.log('no boot id on this system: only the pid decides');
    return;
  }
  // The parent of this test process runs, but the lock was written before a reboot.
  await writeFile(lock, `${process.ppid}\n00000000-0000-4000-8000-000000000000\n`);
  t.is(await withFileLock(lock, async () => 'ran', { timeoutMs: 500 }), 'ran');
  // Written under this boot, the same live pid holds it.
  await writeFile(lock, `${process.ppid}\n${bootId}\n`);
  await t.throwsAsync(() => withFileLock(lock, async () => 'ran', { timeoutMs: 100 }), {
    message: /Timed out waiting for the lock/,
  });
});
