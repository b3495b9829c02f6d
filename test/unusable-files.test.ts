/**
 * Every file a driver or a publisher names, with every kind of content that cannot be used, in
 * one real `tagd start` process (issue 20 item 1: `POST /api/v2/Publishers/Mqtt` naming
 * /etc/passwd as the client certificate answered 201, and 10 ms later mqtt's TLS set-up threw,
 * the unhandled rejection stopped tagd, and every restart with the saved profile stopped it
 * again).
 *
 * Each case is one component naming one unusable file. The test checks, for all of them at once:
 * - `tagd profile check` (checkStartup, full depth) names the field of every case it can judge;
 * - `tagd start` on a profile holding every case gets ready and keeps answering; each driver
 *   is listed Failed (or, for a serial device, Reconnecting) with a reason, each publisher is
 *   Error (not running) with a reason and a log line naming the field, and its health tag and
 *   `tagd_publisher_status` (what the TagdPublisherError alert watches) say Error;
 * - over the API, a publisher naming such a file is refused (400 naming the field), and a
 *   driver is saved and listed Failed or Reconnecting;
 * - the daemon stays up throughout, stops cleanly, and starts again on the profile it saved.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { demoProfileDocument } from '../src/demo-profile.js';
import { validateProfile } from '../src/profile/validate-profile.js';
import { checkStartup } from '../src/startup-checks.js';
import { makeCertificates, testKeyPassphrase } from './helpers/certificates.js';
import { adminToken } from './helpers/demo-daemon.js';
import { seriesValue } from './helpers/prometheus-text.js';
import { startTagd } from './helpers/tagd-process.js';
import { tempDir } from './helpers/temp-dir.js';

const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: profile entries and answers as JSON
type Json = any;

/** What a case must come to. */
type Outcome =
  /** A file check names the field: profile check, start (Failed/Off), the API (publishers: 400). */
  | 'refused'
  /**
   * A DBC that does not parse: `tagd profile check` parses it and names the field; `tagd start`
   * leaves the parsing to the CAN driver (it is read once), whose start fails: Failed, and the
   * log and `reload.failed` name the file.
   */
  | 'failed-at-start'
  /** A serial device: no file check (an adapter may be plugged in later); the driver retries. */
  | 'retried'
  /** A replay log whose lines are not frames: it plays nothing, and no tag turns Good. */
  | 'played-nothing';

interface Case {
  /** Component name: the kind, the field and the content. */
  name: string;
  kind: 'driver' | 'mqtt' | 'webhook';
  /** The entry, naming the unusable file. */
  entry: Json;
  /** The field the answer must name, relative to the entry. */
  field: string;
  outcome: Outcome;
}

test('every file field of every driver and publisher, with every unusable content: tagd stays up and says which field', async (t) => {
  t.timeout(600_000);
  const dir = await tempDir(t);
  const stateDir = join(dir, 'state');
  const certs = await makeCertificates(t);
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run('openssl', args);

  // Usable files, for the other half of each pair: RSA for OPC UA (node-opcua signs with RSA
  // only), the EC pair of the test PKI for MQTT.
  await openssl(
    ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('rsa.key')],
    ...['-out', file('rsa.pem'), '-days', '2', '-subj', '/CN=tagd-opcua'],
  );
  await openssl('genpkey', '-algorithm', 'RSA', '-out', file('rsa-other.key'));
  await openssl(
    ...['pkey', '-in', file('rsa.key'), '-aes256', '-passout', 'pass:x', '-out'],
    file('rsa-encrypted.key'),
  );

  // The unusable contents.
  const contents: Record<string, string> = {
    missing: file('missing.pem'),
    directory: file('folder'),
    fifo: file('fifo'),
    passwd: '/etc/passwd',
    empty: file('empty'),
    binary: file('binary'),
    'der-certificate': file('certificate.der'),
    'der-key': file('key.der'),
    'broken-pem-certificate': file('broken-certificate.pem'),
    'broken-pem-key': file('broken-key.pem'),
    'key-not-certificate': certs.keyFile,
    'certificate-not-key': certs.certFile,
  };
  await mkdir(contents.directory as string);
  await run('mkfifo', [contents.fifo as string]);
  await writeFile(contents.empty as string, '');
  await writeFile(contents.binary as string, randomBytes(512));
  await openssl('x509', '-in', certs.certFile, '-outform', 'DER', '-out', file('certificate.der'));
  await openssl('pkey', '-in', certs.keyFile, '-outform', 'DER', '-out', file('key.der'));
  const pemBody = (label: string) =>
    `-----BEGIN ${label}-----\nTm90IHdoYXQgaXQgc2F5cyBpdCBpcw==\n-----END ${label}-----\n`;
  await writeFile(contents['broken-pem-certificate'] as string, pemBody('CERTIFICATE'));
  await writeFile(contents['broken-pem-key'] as string, pemBody('PRIVATE KEY'));

  const fileContents = ['missing', 'directory', 'fifo', 'passwd', 'empty', 'binary'];
  const certificateContents = [
    ...fileContents,
    'der-certificate',
    'broken-pem-certificate',
    'key-not-certificate',
  ];
  const keyContents = [...fileContents, 'der-key', 'broken-pem-key', 'certificate-not-key'];

  const dbc = join(process.cwd(), 'config/can/demo-vehicle.dbc');
  const replayLog = join(process.cwd(), 'config/can/demo-vehicle.candump');
  const cases: Case[] = [];
  const add = (
    kind: Case['kind'],
    name: string,
    entry: Json,
    field: string,
    outcome: Outcome = 'refused',
  ) => cases.push({ name, kind, entry, field, outcome });
  const opcua = (name: string, certificateFile: string, privateKeyFile: string) => ({
    type: 'opcua',
    name,
    endpointUrl: 'opc.tcp://127.0.0.1:1',
    certificateFile,
    privateKeyFile,
    tags: [{ name: 'T', nodeId: 'ns=1;s=T' }],
  });
  const can = (name: string, dbcFile: string, transport: Json) => ({
    type: 'can',
    name,
    dbcFile,
    transport,
  });
  const mqtt = (name: string, extra: Json) => ({
    name,
    brokerUrl: 'mqtts://127.0.0.1:1',
    collections: ['Line1'],
    ...extra,
  });
  const clientCertificate = (certFile: string, keyFile: string, keyPassphrase?: string) => ({
    authentication: {
      mode: 'Client certificate',
      certFile,
      keyFile,
      ...(keyPassphrase !== undefined ? { keyPassphrase } : {}),
    },
  });
  const webhook = (name: string, caFile: string) => ({
    name,
    destinationUrl: 'https://127.0.0.1:1/tags',
    collections: ['Line1'],
    caFile,
  });
  const at = (content: string) => contents[content] as string;

  for (const content of certificateContents) {
    add(
      'driver',
      `opcua-cert-${content}`,
      opcua(`opcua-cert-${content}`, at(content), file('rsa.key')),
      'certificateFile',
    );
    add(
      'mqtt',
      `mqtt-cert-${content}`,
      mqtt(`mqtt-cert-${content}`, clientCertificate(at(content), certs.keyFile)),
      'authentication.certFile',
    );
    add(
      'mqtt',
      `mqtt-ca-${content}`,
      mqtt(`mqtt-ca-${content}`, { caFile: at(content) }),
      'caFile',
    );
    add(
      'webhook',
      `webhook-ca-${content}`,
      webhook(`webhook-ca-${content}`, at(content)),
      'caFile',
    );
  }
  for (const content of keyContents) {
    add(
      'driver',
      `opcua-key-${content}`,
      opcua(`opcua-key-${content}`, file('rsa.pem'), at(content)),
      'privateKeyFile',
    );
    add(
      'mqtt',
      `mqtt-key-${content}`,
      mqtt(`mqtt-key-${content}`, clientCertificate(certs.certFile, at(content))),
      'authentication.keyFile',
    );
  }
  // Pairs that do not go together, and keys that cannot be decrypted.
  add(
    'driver',
    'opcua-key-mismatched',
    opcua('opcua-key-mismatched', file('rsa.pem'), file('rsa-other.key')),
    'privateKeyFile',
  );
  add(
    'driver',
    'opcua-key-encrypted',
    opcua('opcua-key-encrypted', file('rsa.pem'), file('rsa-encrypted.key')),
    'privateKeyFile',
  );
  add(
    'driver',
    'opcua-key-not-rsa',
    opcua('opcua-key-not-rsa', certs.certFile, certs.keyFile),
    'privateKeyFile',
  );
  add(
    'mqtt',
    'mqtt-key-mismatched',
    mqtt('mqtt-key-mismatched', clientCertificate(certs.certFile, certs.otherKeyFile)),
    'authentication.keyFile',
  );
  add(
    'mqtt',
    'mqtt-key-no-passphrase',
    mqtt('mqtt-key-no-passphrase', clientCertificate(certs.certFile, certs.encryptedKeyFile)),
    'authentication.keyPassphrase',
  );
  add(
    'mqtt',
    'mqtt-key-wrong-passphrase',
    mqtt(
      'mqtt-key-wrong-passphrase',
      clientCertificate(certs.certFile, certs.encryptedKeyFile, `not ${testKeyPassphrase}`),
    ),
    'authentication.keyPassphrase',
  );
  // CAN: the DBC is parsed (text that is no DBC, or an empty file, defines no message and is
  // refused like one that does not parse), the replay log opened at each connect, a serial
  // adapter opened at each attempt.
  const fileProblems = ['missing', 'directory', 'fifo'];
  for (const content of [...fileProblems, 'passwd', 'empty', 'binary', 'der-certificate']) {
    add(
      'driver',
      `can-dbc-${content}`,
      can(`can-dbc-${content}`, at(content), { kind: 'replay', file: replayLog }),
      'dbcFile',
      fileProblems.includes(content) ? 'refused' : 'failed-at-start',
    );
  }
  for (const content of ['missing', 'directory', 'fifo']) {
    add(
      'driver',
      `can-replay-${content}`,
      can(`can-replay-${content}`, dbc, { kind: 'replay', file: at(content) }),
      'transport.file',
    );
  }
  for (const content of ['passwd', 'empty', 'binary']) {
    add(
      'driver',
      `can-replay-${content}`,
      can(`can-replay-${content}`, dbc, { kind: 'replay', file: at(content) }),
      'transport.file',
      'played-nothing',
    );
  }
  for (const content of ['missing', 'directory', 'fifo', 'passwd']) {
    add(
      'driver',
      `can-slcan-${content}`,
      can(`can-slcan-${content}`, dbc, { kind: 'slcan', port: at(content), bitrate: 500_000 }),
      'transport.port',
      'retried',
    );
    add(
      'driver',
      `modbus-rtu-${content}`,
      {
        type: 'modbus',
        name: `modbus-rtu-${content}`,
        transport: { kind: 'rtu', path: at(content) },
        tags: [{ name: 'T', table: 'holdingRegister', address: 0 }],
      },
      'transport.path',
      'retried',
    );
  }

  // --- tagd profile check: every case it can judge, named by its field ---
  const demo = await demoProfileDocument();
  const profile: Json = structuredClone(demo);
  profile.drivers.push(...cases.filter((c) => c.kind === 'driver').map((c) => c.entry));
  profile.publishers.mqtt = cases.filter((c) => c.kind === 'mqtt').map((c) => c.entry);
  profile.publishers.webhooks.push(
    ...cases.filter((c) => c.kind === 'webhook').map((c) => c.entry),
  );
  const validation = validateProfile(profile);
  if (!validation.ok) throw new Error(JSON.stringify(validation.errors));
  const problems = await checkStartup(validation.profile, { profileFolder: dir });
  const pathOf = (c: Case) => {
    const index =
      c.kind === 'driver'
        ? profile.drivers.indexOf(c.entry)
        : c.kind === 'mqtt'
          ? profile.publishers.mqtt.indexOf(c.entry)
          : profile.publishers.webhooks.indexOf(c.entry);
    const list =
      c.kind === 'driver'
        ? 'drivers'
        : c.kind === 'mqtt'
          ? 'publishers.mqtt'
          : 'publishers.webhooks';
    return `${list}[${index}].${c.field}`;
  };
  for (const c of cases) {
    const found = problems.filter((problem) =>
      problem.path.startsWith(pathOf(c).replace(/\.[^[]*$/, '.')),
    );
    if (c.outcome === 'refused' || c.outcome === 'failed-at-start') {
      t.true(
        found.some((problem) => problem.path === pathOf(c)),
        `profile check names ${pathOf(c)} (${c.name}); found ${JSON.stringify(found)}`,
      );
    } else {
      t.deepEqual(found, [], `profile check has nothing to say about ${c.name}`);
    }
  }
  t.false(JSON.stringify(problems).includes('root:x:0'), 'no message quotes a file');

  // --- tagd start on a profile holding every case ---
  const profileFile = join(dir, 'profile.json');
  await writeFile(profileFile, JSON.stringify(profile));
  const start = async () => {
    const tagd = startTagd(
      [
        'start',
        '--profile',
        profileFile,
        '--listen',
        '127.0.0.1:0',
        '--extensions-listen',
        '127.0.0.1:0',
      ],
      { env: { TAGD_STATE_DIR: stateDir } },
    );
    t.teardown(async () => {
      if (tagd.child.exitCode === null && tagd.child.signalCode === null) {
        tagd.child.kill('SIGKILL');
        await tagd.exited;
      }
    });
    const ready = await tagd.waitForLog('tagd ready');
    return { tagd, url: String(ready.url) };
  };
  let { tagd, url } = await start();
  const token = await adminToken(url, stateDir);
  const api = async (path: string, method = 'GET', body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, json: (text ? JSON.parse(text) : undefined) as Json };
  };
  const alive = async (when: string) => {
    t.is(tagd.child.exitCode, null, `tagd still runs ${when}; stderr: ${tagd.stderr()}`);
    t.is((await fetch(`${url}/healthz`)).status, 200, `/healthz answers ${when}`);
  };
  await alive('after start');

  // Drivers: listed Failed with the field named, Reconnecting, or playing nothing.
  const drivers = async () =>
    new Map<string, Json>(
      ((await api('/api/v2/Drivers')).json.drivers as Json[]).map((driver) => [
        driver.name,
        driver,
      ]),
    );
  const checkDriver = (c: Case, driver: Json | undefined) => {
    if (driver === undefined) return t.fail(`${c.name} is listed`);
    if (c.outcome === 'refused') {
      t.is(driver.state, 'Failed', c.name);
      t.true(String(driver.message).includes(`(${c.field})`), `${c.name}: ${driver.message}`);
    } else if (c.outcome === 'failed-at-start') {
      t.is(driver.state, 'Failed', c.name);
      t.is(driver.message, 'The driver failed to start; the gateway log says why.', c.name);
    } else if (c.outcome === 'retried') {
      t.true(['Reconnecting', 'Failed'].includes(driver.state), `${c.name}: ${driver.state}`);
      t.truthy(driver.message ?? driver.lastError, `${c.name} says why`);
    }
    t.is(driver.tagsByQuality.Good, 0, `${c.name} has no Good tag`);
  };
  const driverCases = cases.filter((c) => c.kind === 'driver');
  // A serial device's first attempt may still be under way: its outcome is awaited (the bound
  // only ends a test that would otherwise hang).
  const settled = async (names: readonly string[]) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const listed = await drivers();
      const pending = names.filter((name) => {
        const driver = listed.get(name);
        return driver === undefined || (driver.message ?? driver.lastError) === undefined;
      });
      if (pending.length === 0 || Date.now() > deadline) return listed;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const listed = await settled(driverCases.map((c) => c.name));
  for (const c of driverCases) checkDriver(c, listed.get(c.name));
  const logLines = tagd
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Json);
  for (const c of driverCases.filter((c) => c.outcome === 'failed-at-start')) {
    t.true(
      logLines.some(
        (line) =>
          line.component === c.name &&
          line.msg === 'driver failed to start; the other drivers keep running' &&
          JSON.stringify(line.err).includes(c.entry.dbcFile),
      ),
      `the log says why ${c.name} failed, naming its DBC`,
    );
  }
  t.is(listed.get('Demo')?.state, 'Running', 'the other drivers run');

  // Publishers: Error with a reason, and the log names the field.
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const mqttStates = new Map<string, Json>(
    ((await api('/api/v2/Publishers/Mqtt')).json as Json[]).map((p) => [p.name, p.state]),
  );
  const webhookStates = new Map<string, Json>(
    ((await api('/api/v2/Publishers/Webhooks')).json as Json[]).map((p) => [p.name, p.state]),
  );
  const log = tagd.stdout();
  for (const c of cases.filter((c) => c.kind !== 'driver')) {
    const state = (c.kind === 'mqtt' ? mqttStates : webhookStates).get(c.name);
    t.is(state?.status, 'Error', c.name);
    t.regex(String(state?.reason), /could not be used; the gateway log says why/, c.name);
    const labels = { publisher: c.name, type: c.kind, status: 'Error' };
    t.is(seriesValue(metrics, 'tagd_publisher_status', labels), 1, `${c.name} in the metrics`);
    const health = await api(`/api/v2/Tags/Sample/Publishers/${c.name}/Status`);
    t.is(health.json?.value, 'Error', `${c.name}: its Status health tag`);
    const line = log
      .split('\n')
      .find((entry) => entry.includes(`publisher '${c.name}' cannot start`));
    const named = c.kind === 'mqtt' ? `${c.field}: ` : 'the CA file ';
    t.true(
      line?.toLowerCase().includes(named.toLowerCase()) ?? false,
      `${c.name}: the log names ${c.field}: ${line}`,
    );
  }
  await alive('with every case loaded');

  // --- The same over the API ---
  for (const c of cases.filter((c) => c.kind !== 'driver')) {
    const path = c.kind === 'mqtt' ? '/api/v2/Publishers/Mqtt' : '/api/v2/Publishers/Webhooks';
    const answer = await api(path, 'POST', { ...c.entry, name: `api-${c.name}` });
    t.is(answer.status, 400, `POST ${c.name}`);
    t.true(
      (answer.json.errors as Json[] | undefined)?.some((error) => error.path === c.field) ?? false,
      `POST ${c.name} names ${c.field}: ${JSON.stringify(answer.json.errors)}`,
    );
  }
  for (const c of driverCases) {
    const name = `api-${c.name}`;
    const answer = await api('/api/v2/Drivers', 'POST', { ...c.entry, name });
    t.is(answer.status, 201, `POST driver ${c.name}: ${JSON.stringify(answer.json)}`);
    if (c.outcome === 'refused' || c.outcome === 'failed-at-start') {
      // The field (a file check), or the file (the driver's own error).
      const named = c.outcome === 'refused' ? c.field : c.entry.dbcFile;
      t.true(
        (answer.json.reload.failed as Json[]).some(
          (failed) => failed.component === `drivers/${name}` && failed.message.includes(named),
        ),
        `reload.failed names ${named} for ${name}: ${JSON.stringify(answer.json.reload.failed)}`,
      );
    }
  }
  const added = await settled(driverCases.map((c) => `api-${c.name}`));
  for (const c of driverCases) checkDriver(c, added.get(`api-${c.name}`));
  await alive('after the API calls');

  // --- A clean stop, and a start again on the profile as saved ---
  tagd.child.kill('SIGTERM');
  t.is(await tagd.exited, 0, 'a clean stop');
  t.is(
    JSON.parse(await readFile(profileFile, 'utf8')).drivers.length,
    profile.drivers.length + driverCases.length,
  );
  ({ tagd, url } = await start());
  await alive('after a restart on the saved profile');
  const again = await settled(driverCases.map((c) => `api-${c.name}`));
  for (const c of driverCases) checkDriver(c, again.get(`api-${c.name}`));
  tagd.child.kill('SIGTERM');
  t.is(await tagd.exited, 0);
});
