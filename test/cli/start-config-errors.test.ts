/**
 * Configuration errors exit 78 (systemd does not restart them) and `tagd profile check` finds
 * the same problems `tagd start` refuses on; one daemon per state directory.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { repoRoot, startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

// Spawned tsx processes start slowly on a busy machine: generous bounds, never asserted on.
// Each test sets its own timeout (ava's default of 60 s would end it first): room for its
// processes one after another, at readyMs each.
const readyMs = 180_000;
const processMs = readyMs;

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('a second tagd start on the same state directory exits 78 naming the running one', async (t) => {
  t.timeout(3 * processMs);
  const folder = await tempDir(t);
  const env = { TAGD_STATE_DIR: join(folder, 'state') };
  const first = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    { env },
  );
  t.teardown(() => first.child.kill('SIGKILL'));
  await first.waitForLog('tagd ready', readyMs);
  const second = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    { env },
  );
  t.teardown(() => second.child.kill('SIGKILL'));
  t.is(await second.exited, 78);
  const fatal = jsonLines(second.stdout()).find((line) => line.code === 'state-dir-locked');
  t.regex(String(fatal?.msg), new RegExp(`Another tagd daemon \\(pid ${first.child.pid}\\) runs`));
  first.child.kill('SIGTERM');
  t.is(await first.exited, 0);
});

test('plain HTTP on 0.0.0.0 and a missing certificate: start exits 78 and profile check lists both', async (t) => {
  t.timeout(2 * processMs);
  const folder = await tempDir(t);
  const profile = JSON.parse(await readFile(join(repoRoot, 'config/demo.json'), 'utf8'));
  profile.server.http.host = '0.0.0.0';
  profile.server.https = { port: 0, certFile: 'tls/missing.pem', keyFile: 'tls/missing.key' };
  profile.drivers[1].dbcFile = 'missing.dbc';
  profile.drivers[1].transport.file = join(repoRoot, 'config/can/demo-vehicle.candump');
  delete profile.license;
  // Its app folder is relative to config/: this test is about the listeners and files above.
  delete profile.extensions;
  const file = join(folder, 'profile.json');
  await writeFile(file, JSON.stringify(profile));

  const start = startTagd(['start', '--profile', file], {
    env: { TAGD_STATE_DIR: join(folder, 'state') },
  });
  t.teardown(() => start.child.kill('SIGKILL'));
  t.is(await start.exited, 78);
  const fatal = jsonLines(start.stdout()).find((line) => line.code === 'profile-invalid') as {
    errors?: { path: string }[];
  };
  t.deepEqual(
    fatal?.errors?.map((error) => error.path),
    ['server.http.host', 'server.https.certFile', 'server.https.keyFile'],
  );

  const check = startTagd(['profile', 'check', file], {
    env: { TAGD_STATE_DIR: join(folder, 'state') },
  });
  t.is(await check.exited, 1);
  t.is(check.stdout(), '');
  const lines = check.stderr().split('\n');
  t.is(lines[0], `tagd: Profile ${file} is invalid (4 errors).`);
  t.regex(
    lines[1] ?? '',
    /^ {2}server\.http\.host: Plain HTTP on the non-loopback address 0\.0\.0\.0 .* \(tagd start refuses to start\)$/,
  );
  t.is(
    lines[2],
    `  server.https.certFile: Cannot read the HTTPS certificate file ${join(folder, 'tls/missing.pem')}: no such file. (tagd start refuses to start)`,
  );
  t.regex(lines[3] ?? '', /^ {2}server\.https\.keyFile: /);
  t.is(
    lines[4],
    `  drivers[1].dbcFile: Cannot read the DBC file ${join(folder, 'missing.dbc')}: no such file. (tagd start leaves this driver out)`,
  );
});

test('tagd profile check on a missing file names that file, not --profile', async (t) => {
  t.timeout(processMs);
  const missing = join(await tempDir(t), 'nowhere.json');
  const check = startTagd(['profile', 'check', missing]);
  t.is(await check.exited, 1);
  t.is(check.stderr(), `tagd: No profile at ${missing}.\n`);
});
