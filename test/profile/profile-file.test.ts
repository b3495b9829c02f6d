import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import test from 'ava';
import { ProfileFileError } from '../../src/errors.js';
import {
  checkProfileFile,
  openProfileFile,
  profileFileLimits,
  readProfileFile,
} from '../../src/profile/profile-file.js';
import { tempDir } from '../helpers/temp-dir.js';

async function failure(promise: Promise<unknown>): Promise<ProfileFileError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ProfileFileError) return error;
    throw error;
  }
  throw new Error('it did not fail');
}

test('reads a regular file whole, and through a symbolic link', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'ca.pem');
  await writeFile(file, 'PEM text');
  t.is((await readProfileFile(file, 'the CA file', 100)).toString(), 'PEM text');
  await symlink(file, join(folder, 'link.pem'));
  t.is(
    (await readProfileFile(join(folder, 'link.pem'), 'the CA file', 100)).toString(),
    'PEM text',
  );
});

test('a FIFO without a writer is refused at once instead of blocking the read', async (t) => {
  const folder = await tempDir(t);
  const fifo = join(folder, 'ca.fifo');
  execFileSync('mkfifo', [fifo]);
  // A blocking open would wait for a writer forever: this test would then time out.
  const error = await failure(readProfileFile(fifo, 'the CA file', 100));
  t.is(error.code, 'profile-file-unusable');
  t.is(error.problem, 'not-a-file');
  t.is(
    error.message,
    `Cannot read the CA file ${fifo}: it is not a regular file (a FIFO, socket or device).`,
  );
  t.is((await failure(openProfileFile(fifo, 'the replay log'))).problem, 'not-a-file');
});

test('a missing file, a directory and a character device are named with what is wrong', async (t) => {
  const folder = await tempDir(t);
  const missing = await failure(readProfileFile(join(folder, 'nope.pem'), 'the CA file', 100));
  t.is(missing.problem, 'missing');
  t.is(missing.message, `Cannot read the CA file ${join(folder, 'nope.pem')}: no such file.`);
  t.is(missing.file, join(folder, 'nope.pem'));
  await mkdir(join(folder, 'dir'));
  const directory = await failure(readProfileFile(join(folder, 'dir'), 'the DBC file', 100));
  t.is(directory.problem, 'not-a-file');
  t.is(directory.message, `Cannot read the DBC file ${join(folder, 'dir')}: it is a directory.`);
  // /dev/zero would be read forever without the regular-file check.
  t.is((await failure(readProfileFile('/dev/zero', 'the DBC file', 100))).problem, 'not-a-file');
});

test('a file over the limit is refused without reading it; one at the limit is read', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'big.pem');
  await writeFile(file, Buffer.alloc(101, 65));
  const error = await failure(readProfileFile(file, 'the CA file', 100));
  t.is(error.problem, 'too-large');
  t.is(error.message, `Cannot read the CA file ${file}: it is larger than the limit of 100 bytes.`);
  await writeFile(file, Buffer.alloc(100, 65));
  t.is((await readProfileFile(file, 'the CA file', 100)).length, 100);
  t.is(profileFileLimits.pem, 1024 * 1024);
  await writeFile(file, Buffer.alloc(profileFileLimits.pem + 1, 65));
  t.is(
    (await failure(readProfileFile(file, 'the CA file', profileFileLimits.pem))).message,
    `Cannot read the CA file ${file}: it is larger than the limit of 1 MiB.`,
  );
});

test('a file whose size the kernel reports as 0 (/proc) is read to its end, within the limit', async (t) => {
  // /proc files are regular files of st_size 0 with contents: trusting st_size refused them
  // as "larger than the limit" after reading one byte.
  const status = await readProfileFile('/proc/self/status', 'the DBC file', profileFileLimits.dbc);
  t.regex(status.toString(), /^Name:/);
  t.true(status.length > 100);
  // The limit holds for them from what is read.
  const error = await failure(readProfileFile('/proc/self/status', 'the DBC file', 64));
  t.is(error.problem, 'too-large');
  t.is(
    error.message,
    'Cannot read the DBC file /proc/self/status: it is larger than the limit of 64 bytes.',
  );
});

test('a device or socket is refused from its type before any open (opening a tty raises DTR/RTS)', async (t) => {
  // A UNIX socket cannot be opened at all (ENXIO): were it opened before its type is checked,
  // the error would be that open failure ('unreadable'), not 'not-a-file'.
  const folder = await tempDir(t);
  const socket = join(folder, 'ca.sock');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(() => server.close());
  const refused = await failure(openProfileFile(socket, 'the CA file'));
  t.is(refused.problem, 'not-a-file');
  t.is(
    refused.message,
    `Cannot read the CA file ${socket}: it is not a regular file (a FIFO, socket or device).`,
  );
  for (const device of ['/dev/null', '/dev/zero']) {
    const error = await failure(readProfileFile(device, 'the webhook caFile', 100));
    t.is(error.problem, 'not-a-file');
    t.is(
      error.message,
      `Cannot read the webhook caFile ${device}: it is not a regular file (a FIFO, socket or device).`,
    );
  }
  // Through a symbolic link too: the link is followed to the device, which is refused.
  await symlink('/dev/null', join(folder, 'ca.pem'));
  t.is(
    (await failure(openProfileFile(join(folder, 'ca.pem'), 'the CA file'))).problem,
    'not-a-file',
  );
});

test('checkProfileFile checks type and size without reading', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'bus.dbc');
  await writeFile(file, Buffer.alloc(100, 65));
  await checkProfileFile(file, 'the DBC file', 100);
  await writeFile(file, Buffer.alloc(101, 65));
  const error = await failure(checkProfileFile(file, 'the DBC file', 100));
  t.is(error.problem, 'too-large');
  t.is(
    error.message,
    `Cannot read the DBC file ${file}: it is larger than the limit of 100 bytes.`,
  );
  t.is((await failure(checkProfileFile('/dev/zero', 'the DBC file', 100))).problem, 'not-a-file');
});
