import { execFileSync } from 'node:child_process';
import { chmod, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { ProfileCorruptError, ProfileNotFoundError } from '../../src/errors.js';
import { DurableJsonFile } from '../../src/profile/durable-json-file.js';
import { tempDir } from '../helpers/temp-dir.js';

test('reading a missing file throws ProfileNotFoundError naming the path', async (t) => {
  const file = join(await tempDir(t), 'missing.json');
  const error = await t.throwsAsync(new DurableJsonFile(file).read(), {
    instanceOf: ProfileNotFoundError,
  });
  t.is(error?.code, 'profile-not-found');
  t.is(error?.file, file);
  t.true(error?.message.includes(file), error?.message);
});

test('reading a folder is not reported as a missing or corrupt profile', async (t) => {
  const folder = await tempDir(t);
  const error = await t.throwsAsync(new DurableJsonFile(folder).read());
  t.false(error instanceof ProfileNotFoundError);
  t.false(error instanceof ProfileCorruptError);
  t.is((error as NodeJS.ErrnoException).code, 'profile-file-unusable');
  t.is(error?.message, `Cannot read the file ${folder}: it is a directory.`);
});

test('reading a FIFO fails at once instead of waiting for a writer', async (t) => {
  const fifo = join(await tempDir(t), 'profile.json');
  execFileSync('mkfifo', [fifo]);
  const error = await t.throwsAsync(new DurableJsonFile(fifo).read());
  t.is(
    error?.message,
    `Cannot read the file ${fifo}: it is not a regular file (a FIFO, socket or device).`,
  );
});

for (const [text, detail] of [
  [
    '{\n  "server": {\n    "http": { "port": 80',
    "line 3, column 25: expected ',' or '}' after the property value",
  ],
  [
    '{\n  "server": {\n    "http": { "port": ',
    'line 3, column 23: expected a value, found the end of the file',
  ],
  ['{\n  "name": "trunc', 'line 2, column 17: expected a closing quote'],
  ['', 'line 1, column 1: expected a value, found the end of the file'],
] as const) {
  test(`truncated JSON is ProfileCorruptError at ${detail.split(':')[0]}, bytes untouched`, async (t) => {
    const file = join(await tempDir(t), 'profile.json');
    await writeFile(file, text);
    const error = await t.throwsAsync(new DurableJsonFile(file).read(), {
      instanceOf: ProfileCorruptError,
    });
    t.is(error?.code, 'profile-corrupt');
    t.is(error?.status, 500);
    t.is(error?.file, file);
    t.is(error?.message, `Profile ${file} is not valid JSON (${detail}); it was left untouched.`);
    t.is(await readFile(file, 'utf8'), text);
  });
}

test('an error with a position in the message is located at it', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  const text = '{\n  "a": 1,\n}\n';
  await writeFile(file, text);
  const error = await t.throwsAsync(new DurableJsonFile(file).read(), {
    instanceOf: ProfileCorruptError,
  });
  t.is(
    error?.message,
    `Profile ${file} is not valid JSON (line 3, column 1: expected a quoted property name); it was left untouched.`,
  );
  t.is(await readFile(file, 'utf8'), text);
});

test('an unexpected token mid-file is located where it is', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  await writeFile(file, '{\n  "a": }\n\n\n');
  const error = await t.throwsAsync(new DurableJsonFile(file).read(), {
    instanceOf: ProfileCorruptError,
  });
  t.true(error?.message.includes('line 2, column 8'), error?.message);
  t.true(error?.message.includes('expected a value'), error?.message);
});

test('write then read round-trips and writes 2-space JSON with a final newline', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  const adapter = new DurableJsonFile<unknown>(file);
  const data = { name: 'Grüße 🔑', list: [1, 2.5, null, true], nested: { empty: {} } };
  await adapter.write(data);
  t.deepEqual(await adapter.read(), data);
  t.is(await readFile(file, 'utf8'), `${JSON.stringify(data, null, 2)}\n`);
  t.deepEqual(await new DurableJsonFile(file).read(), data);
});

test('write replaces the previous document and leaves no temporary files', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const adapter = new DurableJsonFile<unknown>(file);
  await adapter.write({ version: 1, long: 'x'.repeat(1000) });
  await adapter.write({ version: 2 });
  t.deepEqual(await adapter.read(), { version: 2 });
  t.deepEqual(await readdir(folder), ['profile.json']);
});

test('a new file is created with mode 0600', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  await new DurableJsonFile(file).write({ a: 1 });
  t.is((await stat(file)).mode & 0o777, 0o600);
});

test('write keeps the mode of an existing file', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  await writeFile(file, '{}\n');
  await chmod(file, 0o640);
  await new DurableJsonFile(file).write({ a: 1 });
  t.is((await stat(file)).mode & 0o777, 0o640);
  await chmod(file, 0o400);
  await new DurableJsonFile(file).write({ a: 2 });
  t.is((await stat(file)).mode & 0o777, 0o400);
  t.deepEqual(JSON.parse(await readFile(file, 'utf8')), { a: 2 });
});

test('write keeps a group-writable mode despite the umask', async (t) => {
  const file = join(await tempDir(t), 'profile.json');
  await writeFile(file, '{}\n');
  await chmod(file, 0o660);
  await new DurableJsonFile(file).write({ a: 1 });
  t.is((await stat(file)).mode & 0o777, 0o660);
});

test('concurrent writes are serialized and the last one wins', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const adapter = new DurableJsonFile<unknown>(file);
  const documents = Array.from({ length: 20 }, (_, index) => ({
    index,
    padding: String(index).repeat(500 * (20 - index)),
  }));
  await Promise.all(documents.map((document) => adapter.write(document)));
  const text = await readFile(file, 'utf8');
  t.deepEqual(JSON.parse(text), documents[19]);
  t.is(text, `${JSON.stringify(documents[19], null, 2)}\n`);
  t.deepEqual(await readdir(folder), ['profile.json']);
});

test('a failed write rejects, leaves the old file and does not block later writes', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const adapter = new DurableJsonFile<unknown>(file);
  await adapter.write({ ok: 1 });
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  await t.throwsAsync(adapter.write(circular), { instanceOf: TypeError });
  t.deepEqual(await adapter.read(), { ok: 1 });
  await adapter.write({ ok: 2 });
  t.deepEqual(await adapter.read(), { ok: 2 });
  t.deepEqual(await readdir(folder), ['profile.json']);
});
