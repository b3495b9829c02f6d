/**
 * A certificate and its key as a profile names them: what readCertificateAndKey says about
 * every kind of content that cannot be used, by field, and that a usable pair passes. The keys
 * and certificates are made by openssl (test/helpers/certificates.ts).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import {
  type CertificateAndKeyFiles,
  readCertificateAndKey,
} from '../../src/profile/certificate-files.js';
import { makeCertificates, testKeyPassphrase } from '../helpers/certificates.js';

const run = promisify(execFile);

const fields = {
  cert: 'authentication.certFile',
  key: 'authentication.keyFile',
  passphrase: 'authentication.keyPassphrase',
};
const names = { cert: 'the client certificate', key: 'the client key' };

test('a usable pair passes, with its passphrase; its PEM texts are returned', async (t) => {
  const certs = await makeCertificates(t);
  const plain = await readCertificateAndKey({
    certFile: certs.certFile,
    keyFile: certs.keyFile,
    fields,
    names,
    tls: true,
  });
  t.deepEqual(plain, {
    ok: true,
    cert: await readFile(certs.certFile, 'utf8'),
    key: await readFile(certs.keyFile, 'utf8'),
  });
  const encrypted = await readCertificateAndKey({
    certFile: certs.certFile,
    keyFile: certs.encryptedKeyFile,
    passphrase: testKeyPassphrase,
    fields,
    names,
    tls: true,
  });
  t.true(encrypted.ok);
  // A chain (the certificate, then its CA) is a certificate file too.
  const chain = join(certs.dir, 'chain.pem');
  await writeFile(chain, `${await readFile(certs.certFile, 'utf8')}${certs.ca.toString()}`);
  t.true(
    (await readCertificateAndKey({ certFile: chain, keyFile: certs.keyFile, fields, names })).ok,
  );
});

test('every kind of unusable content is named by its field, in words, quoting nothing of the file', async (t) => {
  const certs = await makeCertificates(t);
  const file = (name: string) => join(certs.dir, name);
  await writeFile(file('passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
  await writeFile(file('empty'), '');
  await writeFile(
    file('broken.pem'),
    '-----BEGIN CERTIFICATE-----\nTm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
  );
  await writeFile(
    file('broken.key'),
    '-----BEGIN PRIVATE KEY-----\nTm90IGEga2V5\n-----END PRIVATE KEY-----\n',
  );
  await run('openssl', ['x509', '-in', certs.certFile, '-outform', 'DER', '-out', file('c.der')]);
  await run('openssl', ['pkey', '-in', certs.keyFile, '-outform', 'DER', '-out', file('k.der')]);
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'rsa:512', '-nodes', '-keyout', file('small.key')],
    ...['-out', file('small.pem'), '-days', '2', '-subj', '/CN=small'],
  ]);

  const check = async (
    cert: string,
    key: string,
    more: Partial<CertificateAndKeyFiles> = {},
  ): Promise<[string, string][]> => {
    const result = await readCertificateAndKey({
      certFile: cert,
      keyFile: key,
      fields,
      names,
      tls: true,
      ...more,
    });
    return result.ok ? [] : result.problems.map(({ path, message }) => [path, message]);
  };
  const { certFile, keyFile } = certs;
  const cases: [string, string, Partial<CertificateAndKeyFiles>, [string, string][]][] = [
    [
      file('passwd'),
      file('passwd'),
      {},
      [
        [fields.cert, `The client certificate file ${file('passwd')} holds no PEM certificate.`],
        [fields.key, `The client key file ${file('passwd')} holds no PEM private key.`],
      ],
    ],
    [
      file('missing'),
      certs.dir,
      {},
      [
        [fields.cert, `Cannot read the client certificate ${file('missing')}: no such file.`],
        [fields.key, `Cannot read the client key ${certs.dir}: it is a directory.`],
      ],
    ],
    [
      file('empty'),
      file('empty'),
      {},
      [
        [fields.cert, `The client certificate file ${file('empty')} is empty.`],
        [fields.key, `The client key file ${file('empty')} is empty.`],
      ],
    ],
    [
      file('c.der'),
      file('k.der'),
      {},
      [
        [
          fields.cert,
          `The client certificate file ${file('c.der')} holds a DER (binary) certificate; it must be PEM.`,
        ],
        [fields.key, `The client key file ${file('k.der')} holds no PEM private key.`],
      ],
    ],
    [
      file('broken.pem'),
      file('broken.key'),
      {},
      [
        [
          fields.cert,
          `The client certificate file ${file('broken.pem')} holds a certificate that cannot be parsed.`,
        ],
        [
          fields.key,
          `The client key file ${file('broken.key')} holds a private key that cannot be parsed.`,
        ],
      ],
    ],
    [
      keyFile,
      certFile,
      {},
      [
        [
          fields.cert,
          `The client certificate file ${keyFile} holds a private key, not a certificate.`,
        ],
        [fields.key, `The client key file ${certFile} holds a certificate, not a private key.`],
      ],
    ],
    [
      certFile,
      certs.otherKeyFile,
      {},
      [
        [
          fields.key,
          `The client key ${certs.otherKeyFile} does not belong to the client certificate ${certFile}.`,
        ],
      ],
    ],
    [
      certFile,
      certs.encryptedKeyFile,
      {},
      [
        [
          fields.passphrase,
          `The client key file ${certs.encryptedKeyFile} is encrypted: set authentication.keyPassphrase to its passphrase.`,
        ],
      ],
    ],
    [
      certFile,
      certs.encryptedKeyFile,
      { passphrase: 'not the passphrase' },
      [
        [
          fields.passphrase,
          `The client key file ${certs.encryptedKeyFile} cannot be decrypted: authentication.keyPassphrase is wrong.`,
        ],
      ],
    ],
    // A field that takes no passphrase (OPC UA), and a key type the component cannot use.
    [
      certFile,
      certs.encryptedKeyFile,
      { fields: { cert: fields.cert, key: fields.key } },
      [
        [
          fields.key,
          `The client key file ${certs.encryptedKeyFile} is encrypted, and no passphrase can be given here: store it unencrypted.`,
        ],
      ],
    ],
    [
      certFile,
      keyFile,
      { keyTypes: ['rsa'] },
      [
        [
          fields.key,
          `The client key file ${keyFile} holds a key of type EC; only RSA keys can be used here.`,
        ],
      ],
    ],
  ];
  for (const [cert, key, more, expected] of cases) {
    t.deepEqual(await check(cert, key, more), expected, `${cert} + ${key}`);
  }
  // What only OpenSSL's TLS refuses: a key below its security level.
  const [small] = await check(file('small.pem'), file('small.key'));
  t.is(small?.[0], fields.key);
  t.regex(
    small?.[1] ?? '',
    /^The client certificate .+small\.pem and its key .+small\.key cannot be used for TLS \(.*key too small\)\.$/,
  );
});
