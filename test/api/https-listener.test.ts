import { copyFile, readFile, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { type SecureVersion, type TLSSocket, connect as tlsConnect } from 'node:tls';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { createApp } from '../../src/api/app.js';
import { HttpsListener, type HttpsListenerOptions } from '../../src/api/https-listener.js';
import { Daemon } from '../../src/daemon.js';
import { profileSchema } from '../../src/profile/schema.js';
import { findSecrets } from '../../src/profile/secret-fields.js';
import { startApi, testPassword } from '../helpers/api-harness.js';
import {
  makeCertificates,
  type TestCertificates,
  testKeyPassphrase,
} from '../helpers/certificates.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  closed,
  getOn,
  openSocket,
  parseResponse,
  sendUntilClosed,
  uploadThenRead,
} from '../helpers/raw-http.js';
import { tempDir } from '../helpers/temp-dir.js';

const silent = pino({ level: 'silent' });
const okHandler = (_request: unknown, response: { end: (body: string) => void }) =>
  response.end('ok');

interface HttpsResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** One HTTPS request trusting only `ca`. */
function httpsRequest(
  url: string,
  options: {
    ca?: Buffer;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    maxVersion?: SecureVersion;
  } = {},
): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

function listenerOn(
  certificates: TestCertificates,
  options: Partial<HttpsListenerOptions> = {},
): HttpsListener {
  return new HttpsListener({
    host: '127.0.0.1',
    port: 0,
    certFile: certificates.certFile,
    keyFile: certificates.keyFile,
    handler: okHandler,
    logger: silent,
    ...options,
  });
}

async function started(t: ExecutionContext, listener: HttpsListener): Promise<string> {
  await listener.start();
  t.teardown(() => listener.stop());
  return listener.url() as string;
}

async function startFailure(listener: HttpsListener): Promise<Error & { code?: string }> {
  try {
    await listener.start();
  } catch (error) {
    return error as Error & { code?: string };
  }
  await listener.stop();
  throw new Error('start() succeeded');
}

test('the API answers /healthz over TLS to a client trusting the CA, with HSTS', async (t) => {
  const certificates = await makeCertificates(t);
  const api = await startApi(t);
  const listener = listenerOn(certificates, { handler: createApp(api.deps).callback() });
  const url = await started(t, listener);
  t.regex(url, /^https:\/\/127\.0\.0\.1:\d+$/);

  const response = await httpsRequest(`${url}/healthz`, { ca: certificates.ca });
  t.is(response.status, 200);
  t.deepEqual(JSON.parse(response.body), { status: 'ok', version: '0.0.0-test' });
  t.is(response.headers['strict-transport-security'], 'max-age=31536000');

  const localhost = await httpsRequest(`${url.replace('127.0.0.1', 'localhost')}/healthz`, {
    ca: certificates.ca,
  });
  t.is(localhost.status, 200, 'the certificate names localhost too');

  const plain = await api.request('/healthz');
  t.is(plain.status, 200);
  t.is(plain.headers.get('strict-transport-security'), null, 'no HSTS over plain HTTP');
});

test('a client that does not trust the CA refuses the connection', async (t) => {
  const certificates = await makeCertificates(t);
  const url = await started(t, listenerOn(certificates));
  const error = await t.throwsAsync(() => httpsRequest(`${url}/`));
  t.is((error as { code?: string }).code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
  const otherCa = await readFile(certificates.untrusted.certFile);
  const other = await t.throwsAsync(() => httpsRequest(`${url}/`, { ca: otherCa }));
  t.is((other as { code?: string }).code, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');

  const selfSigned = await started(t, listenerOn(certificates, certificates.untrusted));
  const refused = await t.throwsAsync(() =>
    httpsRequest(`${selfSigned}/`, { ca: certificates.ca }),
  );
  t.is((refused as { code?: string }).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
});

test('minVersion TLSv1.3 refuses a TLS 1.2 client; the default accepts it', async (t) => {
  const certificates = await makeCertificates(t);
  const strict = await started(t, listenerOn(certificates, { minVersion: 'TLSv1.3' }));
  await t.throwsAsync(() =>
    httpsRequest(`${strict}/`, { ca: certificates.ca, maxVersion: 'TLSv1.2' }),
  );
  t.is((await httpsRequest(`${strict}/`, { ca: certificates.ca })).body, 'ok');

  const lenient = await started(t, listenerOn(certificates));
  const response = await httpsRequest(`${lenient}/`, {
    ca: certificates.ca,
    maxVersion: 'TLSv1.2',
  });
  t.is(response.body, 'ok');
});

test('a missing certificate file is a listener error naming the file', async (t) => {
  const certificates = await makeCertificates(t);
  const certFile = join(certificates.dir, 'missing.pem');
  const listener = listenerOn(certificates, { certFile });
  const error = await startFailure(listener);
  t.is(error.code, 'listener-failed');
  t.is(error.message, `Cannot read the HTTPS certificate file ${certFile}: no such file.`);
  t.is(listener.url(), undefined, 'nothing is listening');
});

test('a missing key file is a listener error naming the file', async (t) => {
  const certificates = await makeCertificates(t);
  const keyFile = join(certificates.dir, 'missing.key');
  const error = await startFailure(listenerOn(certificates, { keyFile }));
  t.is(error.code, 'listener-failed');
  t.is(error.message, `Cannot read the HTTPS private key file ${keyFile}: no such file.`);
});

test('a certificate path that is a folder is reported as such', async (t) => {
  const certificates = await makeCertificates(t);
  const error = await startFailure(listenerOn(certificates, { certFile: certificates.dir }));
  t.is(
    error.message,
    `Cannot read the HTTPS certificate file ${certificates.dir}: it is a directory.`,
  );
});

test('a certificate file without a PEM certificate is reported with its name', async (t) => {
  const certificates = await makeCertificates(t);
  const error = await startFailure(listenerOn(certificates, { certFile: certificates.keyFile }));
  t.is(error.code, 'listener-failed');
  t.true(
    error.message.startsWith(
      `The HTTPS certificate file ${certificates.keyFile} holds no usable PEM certificate (`,
    ),
    error.message,
  );
});

test('a key file without a private key is reported with its name', async (t) => {
  const certificates = await makeCertificates(t);
  const error = await startFailure(listenerOn(certificates, { keyFile: certificates.certFile }));
  t.true(
    error.message.startsWith(
      `The HTTPS private key file ${certificates.certFile} holds no usable PEM private key (`,
    ),
    error.message,
  );
});

test('a key that does not belong to the certificate is refused', async (t) => {
  const certificates = await makeCertificates(t);
  const error = await startFailure(
    listenerOn(certificates, { keyFile: certificates.otherKeyFile }),
  );
  t.is(error.code, 'listener-failed');
  t.true(
    error.message.startsWith(
      `The HTTPS private key ${certificates.otherKeyFile} does not belong to the certificate ${certificates.certFile} (`,
    ),
    error.message,
  );
});

test('an encrypted key needs its passphrase; a wrong one is refused without showing it', async (t) => {
  const certificates = await makeCertificates(t);
  const keyFile = certificates.encryptedKeyFile;
  const missing = await startFailure(listenerOn(certificates, { keyFile }));
  t.is(
    missing.message,
    `The HTTPS private key ${keyFile} is encrypted: set server.https.keyPassphrase.`,
  );

  const wrongPassphrase = 'not-the-passphrase-42';
  const wrong = await startFailure(
    listenerOn(certificates, { keyFile, keyPassphrase: wrongPassphrase }),
  );
  t.is(wrong.code, 'listener-failed');
  t.is(
    wrong.message,
    `The HTTPS private key ${keyFile} cannot be decrypted: server.https.keyPassphrase is wrong.`,
  );
  t.false(JSON.stringify(wrong, Object.getOwnPropertyNames(wrong)).includes(wrongPassphrase));
  t.is(wrong.cause, undefined, 'no OpenSSL error travels along');

  const url = await started(
    t,
    listenerOn(certificates, { keyFile, keyPassphrase: testKeyPassphrase }),
  );
  t.is((await httpsRequest(`${url}/`, { ca: certificates.ca })).body, 'ok');
});

test('a port in use is reported as a listener error', async (t) => {
  const certificates = await makeCertificates(t);
  const first = await started(t, listenerOn(certificates));
  const port = Number(new URL(first).port);
  const error = await startFailure(listenerOn(certificates, { port }));
  t.is(error.code, 'listener-failed');
  t.regex(error.message, new RegExp(`^Cannot listen on 127\\.0\\.0\\.1:${port} \\(HTTPS\\): `));
});

test('an expired certificate starts with a warning in the log', async (t) => {
  const certificates = await makeCertificates(t);
  const { logger, lines } = captureLogs();
  const inThreeDays = Date.now() + 3 * 86_400_000;
  await started(t, listenerOn(certificates, { logger, now: () => inThreeDays }));
  const warning = lines.find((line) => line.level === 40);
  t.is(warning?.msg, 'the HTTPS certificate has expired: clients will refuse the connection');
  t.is(warning?.certFile, certificates.certFile);
  const listening = lines.find((line) => line.msg === 'API listening');
  t.regex(String(listening?.url), /^https:/);
  t.is(listening?.minVersion, 'TLSv1.2');
  t.is(typeof listening?.certificateExpires, 'string');
});

test('a valid certificate logs no warning', async (t) => {
  const certificates = await makeCertificates(t);
  const { logger, lines } = captureLogs();
  await started(t, listenerOn(certificates, { logger }));
  t.deepEqual(
    lines.filter((line) => line.level >= 40),
    [],
  );
});

test('stop closes the port and is idempotent', async (t) => {
  const certificates = await makeCertificates(t);
  const listener = listenerOn(certificates);
  await listener.start();
  await listener.start();
  const url = listener.url() as string;
  t.is((await httpsRequest(`${url}/`, { ca: certificates.ca })).body, 'ok');
  await listener.stop();
  await listener.stop();
  t.is(listener.url(), undefined);
  const error = await t.throwsAsync(() => httpsRequest(`${url}/`, { ca: certificates.ca }));
  t.is((error as { code?: string }).code, 'ECONNREFUSED');
});

test('stop lets an open request finish, then closes', async (t) => {
  const certificates = await makeCertificates(t);
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  let finish: () => void = () => {};
  const listener = listenerOn(certificates, {
    handler: (_request, response) => {
      finish = () => response.end('late');
      arrived();
    },
  });
  const url = await started(t, listener);
  const pending = httpsRequest(`${url}/`, { ca: certificates.ca });
  await arrival;
  const stopping = listener.stop();
  finish();
  t.is((await pending).body, 'late');
  await stopping;
});

test('stop closes a request still open after drainMs', async (t) => {
  const certificates = await makeCertificates(t);
  let arrived: () => void = () => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const listener = listenerOn(certificates, { drainMs: 50, handler: () => arrived() });
  const url = await started(t, listener);
  const pending = httpsRequest(`${url}/`, { ca: certificates.ca });
  await arrival;
  await listener.stop();
  const error = await t.throwsAsync(pending);
  t.is((error as { code?: string }).code, 'ECONNRESET');
});

test('a cookie sign-in over HTTPS sets Secure cookies; over HTTP it does not', async (t) => {
  const certificates = await makeCertificates(t);
  const api = await startApi(t);
  await api.addUser('ada', ['Viewers']);
  const url = await started(
    t,
    listenerOn(certificates, { handler: createApp(api.deps).callback() }),
  );
  const body = JSON.stringify({ username: 'ada', password: testPassword });
  const secure = await httpsRequest(`${url}/api/v2/Users/Authenticate?useCookies=true`, {
    ca: certificates.ca,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  t.is(secure.status, 200);
  const secureCookies = secure.headers['set-cookie'] ?? [];
  // The three session cookies, besides the deletion of a refresh cookie on its former path.
  const cleared = (cookie: string) => /expires=Thu, 01 Jan 1970/i.test(cookie);
  t.deepEqual(
    secureCookies.filter((cookie) => !cleared(cookie)).map((cookie) => cookie.split('=')[0]),
    ['tagd_session', 'tagd_refresh', 'tagd_csrf'],
  );
  for (const cookie of secureCookies) t.regex(cookie, /; secure(;|$)/i, cookie);
  t.is(JSON.parse(secure.body).token, undefined, 'no token in the body');

  const plain = await api.request('/api/v2/Users/Authenticate?useCookies=true', {
    method: 'POST',
    body: { username: 'ada', password: testPassword },
  });
  t.is(plain.status, 200);
  const plainCookies = plain.headers.getSetCookie();
  t.is(plainCookies.filter((cookie) => !cleared(cookie)).length, 3);
  for (const cookie of plainCookies) t.notRegex(cookie, /; secure(;|$)/i, cookie);
});

test('the profile section server.https: defaults, required files, strict keys', (t) => {
  const parsed = profileSchema.parse({
    server: { https: { certFile: 'c.pem', keyFile: 'k.pem' } },
  });
  t.deepEqual(parsed.server.https, {
    host: '0.0.0.0',
    port: 8443,
    certFile: 'c.pem',
    keyFile: 'k.pem',
    minVersion: 'TLSv1.2',
    handshakeTimeoutMs: 10_000,
    maxConnections: 256,
    maxConnectionsPerAddress: 32,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
  });
  t.is(profileSchema.parse({}).server.https, undefined, 'no section, no HTTPS listener');
  const paths = (https: unknown) => {
    const result = profileSchema.safeParse({ server: { https } });
    return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
  };
  t.deepEqual(paths({}), ['server.https.certFile', 'server.https.keyFile']);
  t.deepEqual(paths({ certFile: 'c', keyFile: 'k', minVersion: 'TLSv1.1' }), [
    'server.https.minVersion',
  ]);
  t.deepEqual(paths({ certFile: 'c', keyFile: 'k', caFile: 'ca.pem' }), ['server.https']);
  t.deepEqual(paths({ certFile: 'c', keyFile: 'k', handshakeTimeoutMs: 50 }), [
    'server.https.handshakeTimeoutMs',
  ]);
  t.deepEqual(paths({ certFile: 'c', keyFile: 'k', maxConnections: 1.5 }), [
    'server.https.maxConnections',
  ]);
  t.deepEqual(paths({ certFile: 'c', keyFile: 'k', keyPassphrase: '' }), [
    'server.https.keyPassphrase',
  ]);
  const secrets = findSecrets(profileSchema, {
    server: { https: { certFile: 'c', keyFile: 'k', keyPassphrase: 'p' } },
  });
  t.deepEqual(secrets, [{ path: ['server', 'https', 'keyPassphrase'], value: 'p' }]);
});

/** TLS over an open `socket`, trusting `ca`; resolves once the handshake is done. */
function overTls(socket: Socket, ca: Buffer): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const secure = tlsConnect({ socket, ca, servername: 'localhost' });
    secure.once('secureConnect', () => {
      secure.off('error', reject);
      resolve(secure);
    });
    secure.once('error', reject);
  });
}

/** A TLS connection to `url` trusting `ca`; resolves once the handshake is done. */
function tlsSocket(url: string, ca: Buffer): Promise<TLSSocket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ca, servername: 'localhost' });
    socket.once('secureConnect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

test('over TLS, a client that reads only once it has sent a 12 MiB chunked body gets its 413 without a reset', async (t) => {
  const certificates = await makeCertificates(t);
  const api = await startApi(t);
  const url = await started(
    t,
    listenerOn(certificates, { handler: createApp(api.deps).callback() }),
  );
  const bytes = 12 * 1024 * 1024;
  const socket = await tlsSocket(url, certificates.ca);
  const result = await uploadThenRead(
    () => socket,
    'POST /api/v2/Users/Authenticate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
    bytes,
    { chunked: true },
  );
  t.is(result.error, undefined, 'no reset');
  t.is(result.written, bytes);
  const answer = parseResponse(result.text);
  t.is(answer.status, 413);
  t.is(answer.headers.connection, 'close');
  t.is(JSON.parse(answer.body).code, 'payload-too-large');
});

test('a client that never starts the TLS handshake is closed after handshakeTimeoutMs', async (t) => {
  const certificates = await makeCertificates(t);
  const url = await started(t, listenerOn(certificates, { handshakeTimeoutMs: 300 }));
  const began = performance.now();
  const silent = await openSocket(url);
  await closed(silent);
  const elapsed = performance.now() - began;
  t.true(elapsed >= 290, `closed after ${elapsed} ms, not before the timeout`);
  // Generous: only a timeout that never fires (node's default is 120 s) should fail this.
  t.true(elapsed < 60_000, `closed after ${elapsed} ms`);
  // A client that does shake hands is served as usual.
  t.is((await httpsRequest(`${url}/`, { ca: certificates.ca })).body, 'ok');
});

test('over TLS too, headers over 16 KiB get 431 and a garbage request line 400, as problem documents', async (t) => {
  const certificates = await makeCertificates(t);
  const url = await started(t, listenerOn(certificates));
  const big = await tlsSocket(url, certificates.ca);
  const tooLarge = parseResponse(
    await sendUntilClosed(
      big,
      `GET / HTTP/1.1\r\nHost: localhost\r\nX-Filler: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    ),
  );
  t.is(tooLarge.status, 431);
  t.is(tooLarge.headers['content-type'], 'application/problem+json');
  t.is(JSON.parse(tooLarge.body).code, 'headers-too-large');

  const garbage = await tlsSocket(url, certificates.ca);
  const bad = parseResponse(await sendUntilClosed(garbage, 'SPEAK FRIEND\r\n\r\n'));
  t.is(bad.status, 400);
  t.is(bad.headers.connection, 'close');
  t.is(JSON.parse(bad.body).code, 'bad-request');
});

test('HTTPS connections over maxConnections are closed on arrival; the open ones keep working', async (t) => {
  const certificates = await makeCertificates(t);
  const url = await started(t, listenerOn(certificates, { maxConnections: 2 }));
  const first = await tlsSocket(url, certificates.ca);
  const second = await tlsSocket(url, certificates.ca);
  t.teardown(() => {
    first.destroy();
    second.destroy();
  });
  t.is((await getOn(first, '/')).body, 'ok');
  t.is((await getOn(second, '/')).body, 'ok');
  const third = await openSocket(url);
  t.is(await sendUntilClosed(third, 'anything'), '', 'closed without a byte');
  await t.throwsAsync(() => tlsSocket(url, certificates.ca), undefined, 'no handshake either');
  t.is((await getOn(first, '/')).body, 'ok', 'the first connection still works');
  t.is((await getOn(second, '/')).body, 'ok', 'the second too');
});

test("HTTPS: maxConnectionsPerAddress counts a plant peer's sockets from before their handshake", async (t) => {
  const certificates = await makeCertificates(t);
  // 127.0.0.2 stands for a plant peer (every 127.x address is loopback by the real rule).
  const url = await started(
    t,
    listenerOn(certificates, {
      maxConnectionsPerAddress: 2,
      isLoopbackPeer: (address) => address === '127.0.0.1',
    }),
  );
  const port = Number(new URL(url).port);
  const fromPlant = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = netConnect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });
  // Two sockets that never start a handshake hold the peer's two slots...
  const idle = [await fromPlant(), await fromPlant()];
  t.teardown(() => {
    for (const socket of idle) socket.destroy();
  });
  // ...so its third is closed on arrival, while loopback is served.
  await t.throwsAsync(
    overTls(await fromPlant(), certificates.ca),
    undefined,
    'closed before a handshake',
  );
  t.is((await httpsRequest(`${url}/`, { ca: certificates.ca })).body, 'ok');
  // A slot freed by a close is the peer's again (the listener learns of it asynchronously).
  const first = idle.shift() as Socket;
  first.destroy();
  await closed(first);
  let answered = false;
  const deadline = performance.now() + 30_000;
  while (!answered && performance.now() < deadline) {
    const socket = await fromPlant();
    answered = await overTls(socket, certificates.ca).then(
      async (tls) => {
        idle.push(tls);
        return (await getOn(tls, '/')).body === 'ok';
      },
      () => false,
    );
  }
  t.true(answered, 'a new connection from the peer is served once one of its own closed');
});

const demoProfile = new URL('../../config/demo.json', import.meta.url);

async function daemonWithHttps(t: ExecutionContext, https: Record<string, unknown>) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  const profile = JSON.parse(await readFile(demoProfile, 'utf8'));
  delete profile.$schema;
  profile.server.https = https;
  await writeFile(profileFile, JSON.stringify(profile, null, 2));
  const logs = captureLogs();
  const daemon = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: logs.logger,
    clock: new ManualClock(),
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => daemon.stop());
  return { daemon, logs, profileFile, folder };
}

test('the daemon serves HTTPS with an encrypted key whose passphrase it seals in the profile', async (t) => {
  const certificates = await makeCertificates(t);
  const { daemon, logs, profileFile } = await daemonWithHttps(t, {
    host: '127.0.0.1',
    port: 0,
    certFile: certificates.certFile,
    keyFile: certificates.encryptedKeyFile,
    keyPassphrase: testKeyPassphrase,
  });
  await daemon.start();

  const saved = await readFile(profileFile, 'utf8');
  const sealed = JSON.parse(saved).server.https.keyPassphrase as string;
  t.true(sealed.startsWith('enc:v1:'), sealed);
  t.false(saved.includes(testKeyPassphrase), 'the passphrase is not on disk in clear');
  t.false(logs.text().includes(testKeyPassphrase), 'nor in the log');

  const httpsUrl = daemon.httpsUrl() as string;
  t.regex(httpsUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
  const response = await httpsRequest(`${httpsUrl}/healthz`, { ca: certificates.ca });
  t.is(response.status, 200);
  t.is((await fetch(`${daemon.url()}/healthz`)).status, 200, 'the HTTP listener still serves');

  const ready = logs.lines.find((line) => line.msg === 'tagd ready');
  t.is(ready?.url, daemon.url());
  t.is(ready?.httpsUrl, httpsUrl);
  const order = logs.lines.map((line) => `${line.component ?? ''} ${line.msg}`);
  t.true(order.indexOf('http API listening') < order.indexOf('https API listening'));

  await daemon.stop();
  t.is(daemon.httpsUrl(), undefined);
  await t.throwsAsync(() => httpsRequest(`${httpsUrl}/healthz`, { ca: certificates.ca }));
});

test('the daemon starts again from the sealed passphrase', async (t) => {
  const certificates = await makeCertificates(t);
  const { daemon, profileFile, folder } = await daemonWithHttps(t, {
    host: '127.0.0.1',
    port: 0,
    certFile: certificates.certFile,
    keyFile: certificates.encryptedKeyFile,
    keyPassphrase: testKeyPassphrase,
  });
  await daemon.start();
  await daemon.stop();
  const again = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: silent,
    clock: new ManualClock(),
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => again.stop());
  await again.start();
  const response = await httpsRequest(`${again.httpsUrl()}/healthz`, { ca: certificates.ca });
  t.is(response.status, 200);
});

test('certificate paths in the profile are relative to the profile folder', async (t) => {
  const certificates = await makeCertificates(t);
  const { daemon, folder } = await daemonWithHttps(t, {
    host: '127.0.0.1',
    port: 0,
    certFile: 'tls/server.pem',
    keyFile: 'server.key',
  });
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(folder, 'tls'));
  await copyFile(certificates.certFile, join(folder, 'tls', 'server.pem'));
  await copyFile(certificates.keyFile, join(folder, 'server.key'));
  await daemon.start();
  const response = await httpsRequest(`${daemon.httpsUrl()}/healthz`, { ca: certificates.ca });
  t.is(response.status, 200);
});

test('the daemon applies handshakeTimeoutMs and maxConnections from the profile', async (t) => {
  const certificates = await makeCertificates(t);
  const { daemon } = await daemonWithHttps(t, {
    host: '127.0.0.1',
    port: 0,
    certFile: certificates.certFile,
    keyFile: certificates.keyFile,
    handshakeTimeoutMs: 300,
    maxConnections: 1,
  });
  await daemon.start();
  const url = daemon.httpsUrl() as string;
  const began = performance.now();
  const silent = await openSocket(url);
  // The one slot is taken by the silent client: another is refused at once.
  const refused = await openSocket(url);
  t.is(await sendUntilClosed(refused, 'x'), '');
  await closed(silent);
  t.true(performance.now() - began >= 290, 'the silent one went at the handshake timeout');
});

test('a wrong passphrase stops the daemon start-up and leaves nothing running', async (t) => {
  const certificates = await makeCertificates(t);
  const { daemon, logs } = await daemonWithHttps(t, {
    host: '127.0.0.1',
    port: 0,
    certFile: certificates.certFile,
    keyFile: certificates.encryptedKeyFile,
    keyPassphrase: 'wrong passphrase 99',
  });
  const error = await t.throwsAsync(() => daemon.start());
  // The start-up checks find it before anything starts: a configuration error (exit 78).
  t.is((error as { code?: string }).code, 'profile-invalid');
  const [problem] = (error as unknown as { errors: { path: string; message: string }[] }).errors;
  t.is(problem?.path, 'server.https');
  t.regex(problem?.message ?? '', /keyPassphrase is wrong/);
  t.is(daemon.url(), undefined, 'the HTTP listener was stopped again');
  t.is(daemon.httpsUrl(), undefined);
  t.false(logs.text().includes('wrong passphrase 99'));
});

test('without a server.https section the daemon has no HTTPS listener', async (t) => {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await copyFile(demoProfile, profileFile);
  const daemon = new Daemon({
    profileFile,
    stateDir: join(folder, 'state'),
    logger: silent,
    clock: new ManualClock(),
    listen: { host: '127.0.0.1', port: 0 },
    extensionsListen: { host: '127.0.0.1', port: 0 },
  });
  t.teardown(() => daemon.stop());
  await daemon.start();
  t.truthy(daemon.url());
  t.is(daemon.httpsUrl(), undefined);
});
