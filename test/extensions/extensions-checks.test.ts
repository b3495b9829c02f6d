import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { demoProfileDocument } from '../../src/demo-profile.js';
import type { Profile } from '../../src/profile/schema.js';
import { validateProfile } from '../../src/profile/validate-profile.js';
import { checkStartup } from '../../src/startup-checks.js';
import { makeCertificates } from '../helpers/certificates.js';
import { tempDir } from '../helpers/temp-dir.js';

// biome-ignore lint/suspicious/noExplicitAny: a JSON document edited at paths the test knows
type Json = any;

async function demoWith(change: (demo: Json) => void): Promise<Profile> {
  const demo = await demoProfileDocument();
  change(demo as unknown as Json);
  const validation = validateProfile(demo);
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  return validation.profile;
}

test('the demo profile has an extensions server on 127.0.0.1:8081 serving the andon app', async (t) => {
  const profile = await demoWith(() => undefined);
  t.like(profile.extensions, {
    listen: { host: '127.0.0.1', port: 8081, allowInsecure: false },
    enableApi: true,
    enableDocs: false,
  });
  t.is(profile.extensions?.apps[0]?.name, 'andon');
  t.regex(profile.extensions?.apps[0]?.folder ?? '', /\/config\/apps\/andon$/);
  t.deepEqual(await checkStartup(profile, { profileFolder: await tempDir(t) }), []);
});

test('an app folder that is missing, a file, or relative to the wrong folder leaves that app out, listed', async (t) => {
  const folder = await tempDir(t);
  await mkdir(join(folder, 'apps/good'), { recursive: true });
  await writeFile(join(folder, 'apps/file'), 'not a folder');
  const profile = await demoWith((demo) => {
    demo.extensions.apps = [
      { name: 'good', folder: 'apps/good' },
      { name: 'missing', folder: 'apps/missing' },
      { name: 'file', folder: 'apps/file' },
    ];
  });
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(problems, [
    {
      path: 'extensions.apps[1].folder',
      message: `The folder of app missing, ${join(folder, 'apps/missing')}, does not exist.`,
      effect: 'app-left-out',
      app: 1,
    },
    {
      path: 'extensions.apps[2].folder',
      message: `The folder of app file, ${join(folder, 'apps/file')}, is not a directory.`,
      effect: 'app-left-out',
      app: 2,
    },
  ]);
});

test('the extensions listener: plain HTTP off loopback and a port another listener has are refused', async (t) => {
  const folder = await tempDir(t);
  const exposed = await demoWith((demo) => {
    demo.extensions.listen = { host: '0.0.0.0', port: 8081 };
  });
  const [problem, ...more] = await checkStartup(exposed, { profileFolder: folder });
  t.deepEqual(more, []);
  t.like(problem, { path: 'extensions.listen.host', effect: 'refused' });
  t.regex(problem?.message ?? '', /set extensions\.listen\.allowInsecure to true/);
  const viaFlag = await checkStartup(await demoWith(() => undefined), {
    profileFolder: folder,
    extensionsListen: { host: '192.0.2.1', port: 8081 },
  });
  t.regex(viaFlag[0]?.message ?? '', /192\.0\.2\.1 \(--extensions-listen\)/);
  const allowed = await demoWith((demo) => {
    demo.extensions.listen = { host: '0.0.0.0', port: 8081, allowInsecure: true };
  });
  t.deepEqual(await checkStartup(allowed, { profileFolder: folder }), []);

  const shared = await demoWith((demo) => {
    demo.extensions.listen.port = 8080;
  });
  t.deepEqual(await checkStartup(shared, { profileFolder: folder }), [
    {
      path: 'extensions.listen.port',
      message:
        'Port 8080 is taken by server.http (127.0.0.1:8080): give the extensions server a port of its own.',
      effect: 'refused',
    },
  ]);
  const otherAddress = await checkStartup(shared, {
    profileFolder: folder,
    listen: { host: '127.0.0.2', port: 8080 },
  });
  t.deepEqual(otherAddress, [], 'the same port on another address is no clash');
  const anyPort = await checkStartup(shared, {
    profileFolder: folder,
    listen: { host: '127.0.0.1', port: 0 },
  });
  t.deepEqual(anyPort, [], 'port 0 never clashes');
});

test('the extensions HTTPS listener: its files are checked like server.https, and its port too', async (t) => {
  const certs = await makeCertificates(t);
  const missing = await demoWith((demo) => {
    demo.extensions.https = { certFile: 'nope.pem', keyFile: certs.keyFile };
  });
  const problems = await checkStartup(missing, { profileFolder: certs.dir });
  t.deepEqual(
    problems.map(({ path, effect }) => ({ path, effect })),
    [{ path: 'extensions.https.certFile', effect: 'refused' }],
  );
  const clash = await demoWith((demo) => {
    demo.server.https = { port: 8443, certFile: certs.certFile, keyFile: certs.keyFile };
    demo.extensions.https = { port: 8443, certFile: certs.certFile, keyFile: certs.keyFile };
  });
  t.deepEqual(
    (await checkStartup(clash, { profileFolder: certs.dir })).map((problem) => problem.path),
    ['extensions.https.port'],
  );
  const fine = await demoWith((demo) => {
    demo.extensions.https = { certFile: certs.certFile, keyFile: certs.keyFile };
  });
  t.deepEqual(await checkStartup(fine, { profileFolder: certs.dir }), []);
});
