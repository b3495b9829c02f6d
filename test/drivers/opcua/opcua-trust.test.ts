/**
 * Server certificate trust end to end: a SignAndEncrypt driver refuses a server whose
 * certificate it does not trust, the certificate lands in `<state>/opcua/pki/rejected`, the real
 * `tagd opcua list` shows it and `tagd opcua trust THUMBPRINT` moves it to trusted/, after which
 * the running driver connects at its next attempt.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createOpcuaDriver } from '../../../drivers/opcua/index.js';
import {
  opcuaPkiDir,
  rejectedCertsDir,
  trustCertificate,
  trustedCertsDir,
} from '../../../drivers/opcua/pki.js';
import { opcuaDriverSchema } from '../../../drivers/opcua/schema.js';
import { systemClock } from '../../../src/clock.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { OpcuaTestServer, testNodeId } from '../../helpers/opcua-server.js';
import { startTagd } from '../../helpers/tagd-process.js';
import { until } from '../../helpers/until.js';

const root = await mkdtemp(join(tmpdir(), 'tagd-opcua-trust-'));
let server: OpcuaTestServer;

test.before(async () => {
  server = await OpcuaTestServer.start({ pkiDir: join(root, 'server-pki') });
});
test.after.always(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

async function tagd(args: string[], stateDir: string) {
  const run = startTagd(args, { env: { TAGD_STATE_DIR: stateDir } });
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

const serverThumbprint = async () =>
  new X509Certificate(await readFile(server.certificateFile)).fingerprint
    .replaceAll(':', '')
    .toLowerCase();

test.serial(
  'an untrusted server is refused until tagd opcua trust moves its certificate',
  async (t) => {
    const stateDir = join(root, 'state');
    const store = new TagStore({ clock: systemClock });
    const logs = captureLogs();
    const driver = createOpcuaDriver(
      opcuaDriverSchema.parse({
        type: 'opcua',
        name: 'Plc',
        endpointUrl: server.endpointUrl,
        securityMode: 'SignAndEncrypt',
        publishingIntervalMs: 50,
        reconnectDelayMs: 200,
        maxReconnectDelayMs: 400,
        tags: [{ name: 'Counter', nodeId: testNodeId('Counter') }],
      }),
      { store, clock: systemClock, logger: logs.logger, stateDir },
    );
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => driver.status().state === 'Reconnecting', 'the server is refused');
    t.regex(driver.status().message ?? '', /not trusted.*tagd opcua trust/);
    t.like(store.require('Plc/Counter'), { quality: 'Unavailable', reason: 'Disconnected' });

    const pki = opcuaPkiDir(stateDir);
    const thumbprint = await serverThumbprint();
    const rejected = await readdir(rejectedCertsDir(pki));
    t.is(rejected.length, 1, 'the server certificate is in rejected/');

    const listed = await tagd(['opcua', 'list'], stateDir);
    t.is(listed.code, 0, listed.stderr);
    t.regex(listed.stdout, new RegExp(`^rejected +${thumbprint}`, 'm'));

    const trusted = await tagd(['opcua', 'trust', thumbprint.slice(0, 12)], stateDir);
    t.is(trusted.code, 0, trusted.stderr);
    t.regex(trusted.stderr, /moved from rejected\/ to trusted\//);
    t.deepEqual(await readdir(rejectedCertsDir(pki)), []);
    t.deepEqual(await readdir(trustedCertsDir(pki)), rejected);

    server.set('Counter', 5);
    await until(() => driver.status().state === 'Running', 'the driver connects');
    await until(() => store.get('Plc/Counter')?.value === 5, 'values arrive');
    t.is((await trustCertificate(pki, thumbprint)).action, 'already');
  },
);

test.serial('tagd opcua trust refuses what names no certificate', async (t) => {
  // Each run of the real command costs a Node start-up: two are enough here.
  const stateDir = join(root, 'other-state');
  await trustCertificate(opcuaPkiDir(stateDir), server.certificateFile);
  const unknown = await tagd(['opcua', 'trust', 'abcdef0123'], stateDir);
  t.is(unknown.code, 1);
  t.regex(unknown.stderr, /No rejected certificate has the thumbprint abcdef0123/);
  const usage = await tagd(['opcua', 'trust'], stateDir);
  t.is(usage.code, 2);
  t.regex(usage.stderr, /usage: tagd opcua trust FILE\|THUMBPRINT/);
});

test.serial(
  'a server that does not trust the certificate of tagd: the status says so',
  async (t) => {
    const strict = await OpcuaTestServer.start({
      pkiDir: join(root, 'strict-pki'),
      trustClients: false,
    });
    t.teardown(() => strict.stop());
    const stateDir = join(root, 'strict-state');
    await trustCertificate(opcuaPkiDir(stateDir), strict.certificateFile);
    const store = new TagStore({ clock: systemClock });
    const driver = createOpcuaDriver(
      opcuaDriverSchema.parse({
        type: 'opcua',
        name: 'Plc',
        endpointUrl: strict.endpointUrl,
        securityMode: 'SignAndEncrypt',
        securityPolicy: 'Aes128_Sha256_RsaOaep',
        tags: [{ name: 'Counter', nodeId: testNodeId('Counter') }],
      }),
      { store, clock: systemClock, logger: captureLogs().logger, stateDir },
    );
    t.teardown(() => driver.stop());
    await driver.start();
    await until(() => driver.status().state === 'Reconnecting', 'the server refuses');
    t.regex(driver.status().message ?? '', /may not trust the certificate of tagd/);
    t.like(store.require('Plc/Counter'), { quality: 'Unavailable' });
  },
);

test('a certificate file from elsewhere is copied into trusted/, once', async (t) => {
  const pki = join(root, 'copy-pki');
  const first = await trustCertificate(pki, server.certificateFile);
  t.is(first.action, 'copied');
  t.is(first.certificate.thumbprint, await serverThumbprint());
  t.is((await readdir(trustedCertsDir(pki))).length, 1);
  for (const folder of [pki, join(pki, 'trusted'), trustedCertsDir(pki)]) {
    t.is((await stat(folder)).mode & 0o777, 0o700, `${folder} is for the owner only`);
  }
  const second = await trustCertificate(pki, server.certificateFile);
  t.is(second.action, 'already');
  await t.throwsAsync(() => trustCertificate(pki, 'not-a-thumbprint'), {
    message: /neither a certificate file nor a thumbprint/,
  });
});
