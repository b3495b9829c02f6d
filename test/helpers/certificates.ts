import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ExecutionContext } from 'ava';
import { tempDir } from './temp-dir.js';

const run = promisify(execFile);

/** Passphrase of {@link TestCertificates.encryptedKeyFile}. */
export const testKeyPassphrase = 'plant-floor passphrase 7';

/** A throw-away PKI made with the `openssl` CLI: a CA and a server certificate it signed. */
export interface TestCertificates {
  /** Folder holding every file below; removed when the test ends. */
  dir: string;
  /** The CA certificate (PEM) a client must trust. */
  caFile: string;
  /** Contents of {@link caFile}, for `https.request({ ca })`. */
  ca: Buffer;
  /** Server certificate for `localhost` and `127.0.0.1`, signed by the CA, valid for 2 days. */
  certFile: string;
  /** The server certificate's private key, unencrypted. */
  keyFile: string;
  /** The same key encrypted with AES-256 under {@link testKeyPassphrase} (PKCS#8). */
  encryptedKeyFile: string;
  /** A second key that belongs to no certificate here. */
  otherKeyFile: string;
  /** A self-signed certificate for 127.0.0.1 no client trusts, with its key. */
  untrusted: { certFile: string; keyFile: string };
}

/**
 * Generates a CA and a server certificate for 127.0.0.1/localhost with the `openssl` CLI into
 * a temp folder. EC P-256 keys keep it fast (tens of milliseconds per key).
 */
export async function makeCertificates(t: ExecutionContext): Promise<TestCertificates> {
  const dir = await tempDir(t);
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) =>
    run('openssl', args, { env: { ...process.env, TAGD_TEST_PASSPHRASE: testKeyPassphrase } });
  const ecKey = (out: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', out);

  await ecKey(file('ca.key'));
  await openssl(
    ...['req', '-x509', '-new', '-key', file('ca.key'), '-out', file('ca.pem')],
    ...['-days', '2', '-subj', '/CN=tagd test CA'],
    ...['-addext', 'basicConstraints=critical,CA:TRUE'],
    ...['-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );

  await ecKey(file('server.key'));
  await openssl(
    ...['req', '-new', '-key', file('server.key'), '-subj', '/CN=localhost'],
    ...['-out', file('server.csr')],
  );
  await writeFile(
    file('server.ext'),
    [
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      'basicConstraints=critical,CA:FALSE',
      'keyUsage=critical,digitalSignature',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  );
  await openssl(
    ...['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem')],
    ...['-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2'],
    ...['-extfile', file('server.ext'), '-out', file('server.pem')],
  );
  // The passphrase goes through the environment, not the command line other users can read.
  await openssl(
    ...['pkey', '-in', file('server.key'), '-aes256'],
    ...['-passout', 'env:TAGD_TEST_PASSPHRASE', '-out', file('server-encrypted.key')],
  );

  await ecKey(file('other.key'));
  await ecKey(file('untrusted.key'));
  await openssl(
    ...['req', '-x509', '-new', '-key', file('untrusted.key'), '-out', file('untrusted.pem')],
    ...['-days', '2', '-subj', '/CN=localhost'],
    ...['-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'],
  );

  return {
    dir,
    caFile: file('ca.pem'),
    ca: await readFile(file('ca.pem')),
    certFile: file('server.pem'),
    keyFile: file('server.key'),
    encryptedKeyFile: file('server-encrypted.key'),
    otherKeyFile: file('other.key'),
    untrusted: { certFile: file('untrusted.pem'), keyFile: file('untrusted.key') },
  };
}
