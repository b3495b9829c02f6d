import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { demoProfileDocument } from '../src/demo-profile.js';
import type { Profile } from '../src/profile/schema.js';
import { validateProfile } from '../src/profile/validate-profile.js';
import { checkStartup } from '../src/startup-checks.js';
import { makeCertificates } from './helpers/certificates.js';
import { tempDir } from './helpers/temp-dir.js';

/** The demo profile as JSON a test edits freely (paths known to exist in it). */
// biome-ignore lint/suspicious/noExplicitAny: a JSON document edited at paths the test knows
type Json = any;

async function demoWith(change: (demo: Json) => void): Promise<Profile> {
  const demo = await demoProfileDocument();
  change(demo as unknown as Json);
  const validation = validateProfile(demo);
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  return validation.profile;
}

test('the demo profile passes every start-up check', async (t) => {
  const folder = await tempDir(t);
  t.deepEqual(await checkStartup(await demoWith(() => undefined), { profileFolder: folder }), []);
});

test('plain HTTP on a non-loopback address is refused, from the profile or --listen', async (t) => {
  const folder = await tempDir(t);
  const profile = await demoWith((demo) => {
    demo.server.http.host = '0.0.0.0';
  });
  const [problem, ...more] = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(more, []);
  t.like(problem, { path: 'server.http.host', effect: 'refused' });
  t.regex(problem?.message ?? '', /^Plain HTTP on the non-loopback address 0\.0\.0\.0 would carry/);

  const loopback = await demoWith(() => undefined);
  const listen = await checkStartup(loopback, {
    profileFolder: folder,
    listen: { host: '192.0.2.1', port: 8080 },
  });
  t.regex(listen[0]?.message ?? '', /address 192\.0\.2\.1 \(--listen\)/);

  const allowed = await demoWith((demo) => {
    demo.server.http = { host: '0.0.0.0', port: 8080, allowInsecure: true };
  });
  t.deepEqual(await checkStartup(allowed, { profileFolder: folder }), []);
});

test('HTTPS: missing files, a FIFO and a key of another certificate are refused, each named', async (t) => {
  const certs = await makeCertificates(t);
  execFileSync('mkfifo', [join(certs.dir, 'key.fifo')]);
  const https = (certFile: string, keyFile: string) =>
    demoWith((demo) => {
      demo.server.https = { host: '127.0.0.1', port: 0, certFile, keyFile };
    });
  const missing = await checkStartup(await https('nope.pem', 'key.fifo'), {
    profileFolder: certs.dir,
  });
  t.deepEqual(missing, [
    {
      path: 'server.https.certFile',
      message: `Cannot read the HTTPS certificate file ${join(certs.dir, 'nope.pem')}: no such file.`,
      effect: 'refused',
    },
    {
      path: 'server.https.keyFile',
      message: `Cannot read the HTTPS private key file ${join(certs.dir, 'key.fifo')}: it is not a regular file (a FIFO, socket or device).`,
      effect: 'refused',
    },
  ]);
  const mismatch = await checkStartup(await https(certs.certFile, certs.otherKeyFile), {
    profileFolder: certs.dir,
  });
  t.like(mismatch, [{ path: 'server.https', effect: 'refused' }]);
  t.regex(mismatch[0]?.message ?? '', /does not belong to the certificate/);
  t.deepEqual(
    await checkStartup(await https('server.pem', 'server.key'), { profileFolder: certs.dir }),
    [],
    'relative paths are resolved from the profile folder',
  );
});

test('files of drivers, publishers and the license: each problem says what start does about it', async (t) => {
  const folder = await tempDir(t);
  execFileSync('mkfifo', [join(folder, 'ca.fifo')]);
  await writeFile(join(folder, 'broken.dbc'), 'VERSION ""\nBO_ 100 Broken 8 A\n');
  const profile = await demoWith((demo) => {
    demo.license.file = 'no-license.json';
    demo.drivers[1].dbcFile = 'broken.dbc';
    demo.drivers[1].transport.file = 'ca.fifo';
    demo.drivers.push({
      type: 'opcua',
      name: 'Press',
      endpointUrl: 'opc.tcp://127.0.0.1:4840',
      securityMode: 'Sign',
      certificateFile: 'client.pem',
      privateKeyFile: 'client.key',
      tags: [{ name: 'Speed', nodeId: 'ns=1;s=Speed' }],
    });
    demo.publishers.webhooks[0].caFile = 'ca.fifo';
  });
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(
    problems.map(({ path, effect, driver }) => ({ path, effect, driver })),
    [
      { path: 'license.file', effect: 'unlicensed', driver: undefined },
      { path: 'drivers[1].dbcFile', effect: 'driver-left-out', driver: 1 },
      { path: 'drivers[1].transport.file', effect: 'driver-left-out', driver: 1 },
      // The OPC UA driver comes after the demo's simulator, CAN bus and derived tags.
      { path: 'drivers[3].certificateFile', effect: 'driver-left-out', driver: 3 },
      { path: 'drivers[3].privateKeyFile', effect: 'driver-left-out', driver: 3 },
      { path: 'publishers.webhooks[0].caFile', effect: 'publisher-error', driver: undefined },
    ],
  );
  t.is(
    problems[0]?.message,
    `Cannot read the license file ${join(folder, 'no-license.json')}: no such file.`,
  );
  t.regex(problems[1]?.message ?? '', /broken\.dbc:2:/);
  t.is(
    problems[5]?.message,
    `Cannot read the CA file ${join(folder, 'ca.fifo')}: it is not a regular file (a FIFO, socket or device).`,
  );
});

test('a DBC with no message is a problem of the profile check at dbcFile', async (t) => {
  const folder = await tempDir(t);
  await writeFile(join(folder, 'shadow'), 'root:*:19000:0:99999:7:::\n');
  const profile = await demoWith((demo) => {
    demo.drivers[1].dbcFile = 'shadow';
  });
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(
    problems.map(({ path, effect }) => ({ path, effect })),
    [{ path: 'drivers[1].dbcFile', effect: 'driver-left-out' }],
  );
  t.is(
    problems[0]?.message,
    `${join(folder, 'shadow')}:2:1: the file defines no message (BO_): it is not a DBC file, or one with nothing to decode.`,
  );
});

test('a disabled driver is not checked', async (t) => {
  const folder = await tempDir(t);
  const profile = await demoWith((demo) => {
    demo.drivers[1].dbcFile = 'missing.dbc';
    demo.drivers[1].enabled = false;
  });
  t.deepEqual(await checkStartup(profile, { profileFolder: folder }), []);
});

test("tagd start's depth ('files') reads nothing its users read right after: DBC and license only by type", async (t) => {
  const folder = await tempDir(t);
  // A DBC that does not parse and a license that does not exist: the CAN driver and the
  // daemon's own license load report those, so the start-up check does not read them again.
  await writeFile(join(folder, 'broken.dbc'), 'VERSION ""\nBO_ 100 Broken 8 A\n');
  const broken = await demoWith((demo) => {
    demo.license.file = 'no-license.json';
    demo.drivers[1].dbcFile = 'broken.dbc';
  });
  t.deepEqual(
    (await checkStartup(broken, { profileFolder: folder, depth: 'files' })).map((p) => p.path),
    [],
  );
  t.deepEqual(
    (await checkStartup(broken, { profileFolder: folder })).map((p) => p.path),
    ['license.file', 'drivers[1].dbcFile'],
    'the full check (tagd profile check) still reads and parses them',
  );
  // A DBC that is not a regular file is still refused before the driver would open it.
  execFileSync('mkfifo', [join(folder, 'bus.fifo')]);
  const fifo = await demoWith((demo) => {
    demo.drivers[1].dbcFile = 'bus.fifo';
  });
  const [problem, ...more] = await checkStartup(fifo, { profileFolder: folder, depth: 'files' });
  t.deepEqual(more, []);
  t.is(problem?.path, 'drivers[1].dbcFile');
  t.is(problem?.effect, 'driver-left-out');
  t.is(
    problem?.message,
    `Cannot read the DBC file ${join(folder, 'bus.fifo')}: it is not a regular file (a FIFO, socket or device).`,
  );
});

test("an MQTT driver's caFile and client certificate files are checked; it is left out", async (t) => {
  const folder = await tempDir(t);
  const profile = await demoWith((demo) => {
    demo.drivers = [
      {
        type: 'mqtt',
        name: 'Remote',
        brokerUrl: 'mqtts://broker.example:8883',
        caFile: 'missing-ca.pem',
        authentication: { mode: 'Client certificate', certFile: 'gw1.pem', keyFile: 'gw1.key' },
        subscriptions: [{ topic: 'plant/#', tag: '{1}', format: 'tagd' }],
      },
    ];
    demo.collections = [];
    demo.publishers = {};
  });
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(
    problems.map(({ path, effect }) => ({ path, effect })),
    [
      { path: 'drivers[0].caFile', effect: 'driver-left-out' },
      { path: 'drivers[0].authentication.certFile', effect: 'driver-left-out' },
      { path: 'drivers[0].authentication.keyFile', effect: 'driver-left-out' },
    ],
  );
});

test("an MQTT publisher's caFile and client certificate files are checked; it is Error", async (t) => {
  const folder = await tempDir(t);
  const profile = await demoWith((demo) => {
    demo.publishers.mqtt = [
      {
        name: 'cloud',
        brokerUrl: 'mqtts://broker.example:8883',
        collections: ['Line1'],
        caFile: 'missing-ca.pem',
        authentication: { mode: 'Client certificate', certFile: 'gw1.pem', keyFile: 'gw1.key' },
      },
    ];
  });
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(
    problems.map(({ path, effect }) => ({ path, effect })),
    [
      { path: 'publishers.mqtt[0].caFile', effect: 'publisher-error' },
      { path: 'publishers.mqtt[0].authentication.certFile', effect: 'publisher-error' },
      { path: 'publishers.mqtt[0].authentication.keyFile', effect: 'publisher-error' },
    ],
  );
  t.is(
    problems[1]?.message,
    `Cannot read the client certificate ${join(folder, 'gw1.pem')}: no such file.`,
  );
});

test("a Sparkplug host driver's caFile and client certificate files are checked; the driver is left out", async (t) => {
  const folder = await tempDir(t);
  const profile = await demoWith((demo) => {
    demo.drivers.push({
      type: 'sparkplug',
      name: 'site',
      brokerUrl: 'mqtts://broker.example:8883',
      hostId: 'central',
      caFile: 'missing-ca.pem',
      authentication: { mode: 'Client certificate', certFile: 'gw1.pem', keyFile: 'gw1.key' },
    });
  });
  const index = profile.drivers.length - 1;
  const problems = await checkStartup(profile, { profileFolder: folder });
  t.deepEqual(
    problems.map(({ path, effect, driver }) => ({ path, effect, driver })),
    [
      { path: `drivers[${index}].caFile`, effect: 'driver-left-out', driver: index },
      {
        path: `drivers[${index}].authentication.certFile`,
        effect: 'driver-left-out',
        driver: index,
      },
      {
        path: `drivers[${index}].authentication.keyFile`,
        effect: 'driver-left-out',
        driver: index,
      },
    ],
  );
});
