import { execFile } from 'node:child_process';
import { cp, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import { version } from '../src/version.js';
import { logWaitMs, repoRoot, startTagd } from './helpers/tagd-process.js';
import { tempDir } from './helpers/temp-dir.js';

const demoProfile = join(repoRoot, 'config/demo.json');
// Tests that wait for 'tagd ready' may take long on a loaded box (see logWaitMs); ava's own
// inactivity timeout (60 s) must not end them first.
const startTestMs = logWaitMs + 60_000;

/**
 * Runs `tagd profile check` on `profile`, written to a temp folder that is also its state
 * folder; answers its exit code and output.
 */
async function checkProfile(t: ExecutionContext, profile: unknown) {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  await writeFile(file, JSON.stringify(profile));
  const run = startTagd(['profile', 'check', file], { env: { TAGD_STATE_DIR: folder } });
  return { code: await run.exited, stdout: run.stdout(), stderr: run.stderr() };
}

test('tagd version prints the package version', async (t) => {
  const run = startTagd(['version']);
  t.is(await run.exited, 0);
  t.is(run.stdout(), `${version}\n`);
  const manifest = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8'));
  t.is(version, manifest.version);
});

test('tagd profile check accepts the demo profile', async (t) => {
  const run = startTagd(['profile', 'check', demoProfile]);
  t.is(await run.exited, 0);
  const demo = JSON.parse(await readFile(demoProfile, 'utf8'));
  t.is(
    run.stdout(),
    `${demoProfile}: valid (3 drivers, 15 tags, 1 collections, ${demo.publishers?.webhooks?.length ?? 0} webhook publishers)\n`,
  );
});

test('tagd profile check lists every error with its path and exits 1', async (t) => {
  const run = await checkProfile(t, {
    server: { http: { port: 99999 } },
    drivers: [{ type: 'modbos', name: 'PLC1' }],
    collections: [{ name: 'A', members: ['x//y'] }],
    publisherz: {},
  });
  t.is(run.code, 1);
  const errorLines = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim().split(':')[0]);
  t.deepEqual(errorLines.sort(), [
    'collections[0].members[0]',
    'drivers[0].type',
    'publisherz',
    'server.http.port',
  ]);
  t.regex(run.stderr, /is invalid \(4 errors\)/);
});

test('tagd profile check lists the start-up problems of the valid parts together with the schema errors', async (t) => {
  const run = await checkProfile(t, {
    server: { https: { host: '127.0.0.1', port: 0, certFile: 'no.pem', keyFile: 'no.key' } },
    drivers: [
      { type: 'modbos', name: 'PLC1' },
      { type: 'simulator', name: 'Sim', tags: [{ name: 'Flow', kind: 'sine' }] },
      {
        type: 'can',
        name: 'Engine',
        dbcFile: 'missing.dbc',
        transport: { kind: 'replay', file: 'missing.log' },
      },
    ],
  });
  t.is(run.code, 1);
  const paths = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim().split(': ')[0]);
  t.deepEqual(
    paths.sort(),
    [
      'drivers[0].type',
      'drivers[2].dbcFile',
      'drivers[2].transport.file',
      'server.https.certFile',
      'server.https.keyFile',
    ],
    'the CAN driver keeps its own index although the driver before it was left out',
  );
  t.regex(run.stderr, /drivers\[2\]\.dbcFile: .*\(tagd start leaves this driver out\)/);
  t.regex(run.stderr, /ran on the parts of the profile without errors/);
});

test('tagd profile check warns of collections a publisher or history names but the profile lacks', async (t) => {
  const run = await checkProfile(t, {
    drivers: [{ type: 'simulator', name: 'Sim', tags: [{ name: 'Flow', kind: 'sine' }] }],
    collections: [{ name: 'Line1', members: ['Sim/*'] }],
    publishers: {
      webhooks: [
        {
          name: 'cloud',
          destinationUrl: 'http://127.0.0.1:9/hook',
          collections: ['Line1', 'Lin2'],
        },
      ],
    },
    history: { backend: 'sqlite', log: [{ collection: 'Line' }] },
  });
  t.is(run.code, 0, run.stderr);
  t.is(
    run.stderr,
    "warning: publishers.webhooks[0].collections[1]: Collection 'Lin2' does not exist in the profile: publisher 'cloud' stays in Error until it is created.\n" +
      "warning: history.log[0].collection: Collection 'Line' does not exist in the profile: this entry logs nothing until it is created.\n",
  );
});

test('tagd profile check warns of derived tags reading tags no driver declares, and exits 0', async (t) => {
  const run = await checkProfile(t, {
    drivers: [
      { type: 'simulator', name: 'Sim', tags: [{ name: 'Flow', kind: 'sine' }] },
      {
        type: 'derived',
        name: 'Calc',
        tags: [{ name: 'Sum', expression: '{Sim/Flow} + {Sim/Flwo}' }],
      },
    ],
  });
  t.is(run.code, 0);
  t.is(
    run.stderr,
    "warning: drivers[1].tags[0].expression: reads {Sim/Flwo}, but driver 'Sim' has no tag 'Flwo': Calc/Sum is Bad (NotFound) until that tag exists.\n",
  );
  t.regex(run.stdout, /valid \(2 drivers, 2 tags/);
});

test('tagd profile check names a loop of derived tags and the position of an expression error', async (t) => {
  const run = await checkProfile(t, {
    drivers: [
      {
        type: 'derived',
        name: 'Calc',
        tags: [
          { name: 'A', expression: '{./B} * 2' },
          { name: 'B', expression: '{./A} / 2' },
          { name: 'C', expression: 'avg({./A}, 5)' },
        ],
      },
    ],
  });
  t.is(run.code, 1);
  t.regex(
    run.stderr,
    /drivers\[0\]\.tags\[0\]\.expression: Derived tags form a loop, so none of them can be evaluated: Calc\/A → Calc\/B → Calc\/A\./,
  );
  t.regex(
    run.stderr,
    /drivers\[0\]\.tags\[2\]\.expression: line 1, column 12: avg\(\): argument 2 \(window\) must be a window/,
  );
});

test('tagd start with a missing profile says where it looked and exits 78', async (t) => {
  const folder = await tempDir(t);
  const missing = join(folder, 'nowhere.json');
  const run = startTagd(['start', '--profile', missing], {
    env: { TAGD_STATE_DIR: join(folder, 'state') },
  });
  t.is(await run.exited, 78);
  t.true(run.stdout().includes(missing), run.stdout());
});

test('tagd start refuses an invalid profile, listing every error, exit 78', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  profile.drivers[0].tags[0].name = 'bad name';
  profile.drivers[0].tags[1].name = profile.drivers[0].tags[2].name;
  profile.drivers[0].tagz = [];
  await writeFile(file, JSON.stringify(profile));
  const run = startTagd(['start', '--profile', file], {
    env: { TAGD_STATE_DIR: join(folder, 'state') },
  });
  t.is(await run.exited, 78);
  const fatal = run
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; errors?: { path: string }[] })
    .find((line) => line.errors);
  t.deepEqual(fatal?.errors?.map((error) => error.path).sort(), [
    'drivers[0].tags[0].name',
    'drivers[0].tags[2].name',
    'drivers[0].tagz',
  ]);
});

test('a truncated profile is reported with its line and never overwritten', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  const text = (await readFile(demoProfile, 'utf8')).slice(0, 200);
  await writeFile(file, text);
  const run = startTagd(['start', '--profile', file], {
    env: { TAGD_STATE_DIR: join(folder, 'state') },
  });
  t.is(await run.exited, 78);
  t.regex(run.stdout(), /not valid JSON \(line \d+, column \d+/);
  t.is(await readFile(file, 'utf8'), text);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`tagd start serves the demo profile and ${signal} stops it cleanly within 10 s`, async (t) => {
    t.timeout(startTestMs);
    const folder = await tempDir(t);
    const run = startTagd(
      ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
      {
        env: { TAGD_STATE_DIR: join(folder, 'state') },
      },
    );
    t.teardown(() => run.child.kill('SIGKILL'));
    const ready = await run.waitForLog('tagd ready');
    const response = await fetch(`${ready.url}/healthz`);
    t.is(response.status, 200);
    const sent = Date.now();
    run.child.kill(signal);
    t.is(await run.exited, 0);
    t.true(Date.now() - sent < 10_000);
    t.true(run.stdout().includes('"msg":"stopped"'));
  });
}

// Serial (ava runs serial tests before the others of the file): the build costs many seconds
// of CPU, which the tests waiting for 'tagd ready' should not have to share.
test.serial('the built command (node dist/src/cli.js) starts the demo profile', async (t) => {
  t.timeout(startTestMs + 180_000);
  // Build into a throwaway copy so the test neither needs nor disturbs the repository's dist/.
  const folder = await tempDir(t);
  for (const entry of [
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'src',
    'drivers',
    'config',
  ]) {
    await cp(join(repoRoot, entry), join(folder, entry), { recursive: true });
  }
  await symlink(join(repoRoot, 'node_modules'), join(folder, 'node_modules'));
  await promisify(execFile)(process.execPath, [
    join(repoRoot, 'node_modules/typescript/bin/tsc'),
    '-p',
    join(folder, 'tsconfig.build.json'),
    // Emit only: CI type-checks before the tests (npx tsc --noEmit), and checking here again
    // doubled the build's CPU (17 s against 8 s here).
    '--noCheck',
  ]);
  const entry = join(folder, 'dist/src/cli.js');
  const versionRun = startTagd(['version'], { entry, cwd: folder });
  t.is(await versionRun.exited, 0);
  t.is(versionRun.stdout(), `${version}\n`);
  const run = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    {
      entry,
      cwd: folder,
      env: { TAGD_STATE_DIR: join(folder, 'state') },
    },
  );
  t.teardown(() => run.child.kill('SIGKILL'));
  const ready = await run.waitForLog('tagd ready');
  // The simulator's eleven tags (two of them writable), the 13 signals of the replayed CAN bus
  // (config/can/), the four derived tags, the demo publisher's three health tags and the three
  // demo alarms' three state tags each, and the two health tags of alarm e-mail (Off: the demo
  // has no notifications section).
  t.is(ready.tags, 42);
  run.child.kill('SIGTERM');
  t.is(await run.exited, 0);
});

test('an unknown command prints usage and exits 2', async (t) => {
  const run = startTagd(['frobnicate']);
  t.is(await run.exited, 2);
  t.regex(run.stderr(), /unknown command 'frobnicate'/);
  t.regex(run.stderr(), /tagd start/);
});

test('tagd start --demo runs a copy of the demo profile and never writes the committed one', async (t) => {
  t.timeout(startTestMs);
  const folder = await tempDir(t);
  const before = await readFile(demoProfile, 'utf8');
  const run = startTagd(
    ['start', '--demo', '--listen', '127.0.0.1:0', '--extensions-listen', '127.0.0.1:0'],
    {
      env: { TAGD_STATE_DIR: join(folder, 'state') },
    },
  );
  t.teardown(() => run.child.kill('SIGKILL'));
  await run.waitForLog('tagd ready');
  run.child.kill('SIGTERM');
  t.is(await run.exited, 0);
  t.is(await readFile(demoProfile, 'utf8'), before);
  const copy = JSON.parse(await readFile(join(folder, 'state/demo-profile.json'), 'utf8'));
  t.regex(copy.publishers.webhooks[0].destinationUrl, /^enc:v1:/);
  t.is(copy.license.file, join(repoRoot, 'config/demo-license.json'));
  t.true(run.stdout().includes('"edition":"server"'), 'the demo license is in force');
});
