/**
 * A client certificate and its private key, read from the files a profile names and checked the
 * way their user will use them: every certificate of the file parsed, the key parsed and
 * decrypted with its passphrase, the key matched to the certificate and, for TLS, a secure
 * context made from the pair. An MQTT publisher's client certificate and an OPC UA driver's go
 * through here when the profile is saved over the API, checked (`tagd profile check`), loaded
 * (start, reload) and when the component starts, so a file that would make the library throw
 * later is refused up front, naming the field.
 *
 * Messages name the file and say what is wrong in tagd's words; they never quote what a file
 * holds, and never the passphrase (OpenSSL's own messages quote neither).
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import type { FieldError } from '../errors.js';
import { profileFileLimits, readProfileFile } from './profile-file.js';

/** What {@link readCertificateAndKey} reads and how the problems it finds are named. */
export interface CertificateAndKeyFiles {
  /** The certificate file (PEM; the certificate first, then any intermediates), resolved. */
  certFile: string;
  /** The private key file (PEM), resolved. */
  keyFile: string;
  /** The passphrase of an encrypted key; never logged nor put in a message. */
  passphrase?: string;
  /**
   * The field names the problems carry as their `path`, e.g. `authentication.certFile`. Without
   * `passphrase`, an encrypted key is refused (the component cannot take a passphrase).
   */
  fields: { cert: string; key: string; passphrase?: string };
  /** The files in words, e.g. `the client certificate`, `the client key`. */
  names: { cert: string; key: string };
  /** Key types the component can use (node:crypto's `asymmetricKeyType`). Default: any. */
  keyTypes?: readonly string[];
  /** Make a TLS secure context of the pair, as a TLS client will. Default false. */
  tls?: boolean;
}

/** What {@link readCertificateAndKey} found: the PEM texts, or every problem, by field. */
export type CertificateAndKey =
  | { ok: true; cert: string; key: string }
  | { ok: false; problems: FieldError[] };

const pemBlock = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * Reads both files (regular files of at most 1 MiB, opened without blocking) and checks them:
 * the certificate file holds PEM certificates, each parsable, the key file a PEM private key
 * that the passphrase decrypts, of a usable type, that belongs to the (first) certificate, and,
 * with `tls`, that OpenSSL accepts the pair for a TLS client (a key too small for its security
 * level, for one). Never throws for what the files hold.
 */
export async function readCertificateAndKey(
  files: CertificateAndKeyFiles,
): Promise<CertificateAndKey> {
  const { fields, names } = files;
  const problems: FieldError[] = [];
  const read = async (file: string, what: string, path: string) => {
    try {
      return await readProfileFile(file, what, profileFileLimits.pem);
    } catch (error) {
      problems.push({ path, message: messageOf(error) });
      return undefined;
    }
  };
  const certBytes = await read(files.certFile, names.cert, fields.cert);
  const keyBytes = await read(files.keyFile, names.key, fields.key);

  let certificate: X509Certificate | undefined;
  if (certBytes !== undefined) {
    const problem = certificateProblem(certBytes);
    if (problem === undefined) certificate = new X509Certificate(firstCertificate(certBytes));
    else
      problems.push({
        path: fields.cert,
        message: `${capital(names.cert)} file ${files.certFile} ${problem}`,
      });
  }
  let key: KeyObject | undefined;
  if (keyBytes !== undefined) {
    const parsed = parseKey(keyBytes, files);
    if ('problem' in parsed) problems.push(parsed.problem);
    else key = parsed.key;
  }
  if (problems.length > 0 || certificate === undefined || key === undefined) {
    return { ok: false, problems };
  }
  if (!certificate.checkPrivateKey(key)) {
    return {
      ok: false,
      problems: [
        {
          path: fields.key,
          message: `${capital(names.key)} ${files.keyFile} does not belong to ${names.cert} ${files.certFile}.`,
        },
      ],
    };
  }
  const cert = (certBytes as Buffer).toString('utf8');
  const keyText = (keyBytes as Buffer).toString('utf8');
  if (files.tls) {
    try {
      createSecureContext({
        cert,
        key: keyText,
        ...(files.passphrase !== undefined ? { passphrase: files.passphrase } : {}),
      });
    } catch (error) {
      return {
        ok: false,
        problems: [
          {
            path: fields.key,
            message: `${capital(names.cert)} ${files.certFile} and its key ${files.keyFile} cannot be used for TLS (${messageOf(error)}).`,
          },
        ],
      };
    }
  }
  return { ok: true, cert, key: keyText };
}

/**
 * What is wrong with the contents of a certificate file, as the end of a sentence, or undefined
 * when it holds PEM certificates only, each parsable.
 */
export function certificateProblem(bytes: Buffer): string | undefined {
  if (bytes.length === 0) return 'is empty.';
  const blocks = [...bytes.toString('latin1').matchAll(pemBlock)];
  if (blocks.length === 0) {
    if (parses(bytes)) return 'holds a DER (binary) certificate; it must be PEM.';
    return 'holds no PEM certificate.';
  }
  const certificates = blocks.filter((block) => block[1] === 'CERTIFICATE');
  if (certificates.length === 0) {
    return blocks.some((block) => block[1]?.includes('PRIVATE KEY'))
      ? 'holds a private key, not a certificate.'
      : 'holds no PEM certificate.';
  }
  for (const block of certificates) {
    if (!parses(Buffer.from(block[0], 'latin1')))
      return 'holds a certificate that cannot be parsed.';
  }
  return undefined;
}

function firstCertificate(bytes: Buffer): Buffer {
  const block = [...bytes.toString('latin1').matchAll(pemBlock)].find(
    (found) => found[1] === 'CERTIFICATE',
  );
  return Buffer.from((block as RegExpMatchArray)[0], 'latin1');
}

function parses(bytes: Buffer): boolean {
  try {
    new X509Certificate(bytes);
    return true;
  } catch {
    return false;
  }
}

function parseKey(
  bytes: Buffer,
  files: CertificateAndKeyFiles,
): { key: KeyObject } | { problem: FieldError } {
  const { fields, names, keyFile, passphrase } = files;
  const at = (path: string, message: string) => ({ problem: { path, message } });
  const key = `${capital(names.key)} file ${keyFile}`;
  if (bytes.length === 0) return at(fields.key, `${key} is empty.`);
  const text = bytes.toString('latin1');
  const encrypted =
    text.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----') ||
    text.includes('Proc-Type: 4,ENCRYPTED');
  if (encrypted && fields.passphrase === undefined) {
    return at(
      fields.key,
      `${key} is encrypted, and no passphrase can be given here: store it unencrypted.`,
    );
  }
  if (encrypted && passphrase === undefined) {
    return at(
      fields.passphrase as string,
      `${key} is encrypted: set ${fields.passphrase} to its passphrase.`,
    );
  }
  let parsed: KeyObject;
  try {
    parsed = createPrivateKey({
      key: bytes,
      format: 'pem',
      ...(passphrase !== undefined ? { passphrase } : {}),
    });
  } catch (error) {
    if (encrypted || (error as { code?: string }).code === 'ERR_OSSL_BAD_DECRYPT') {
      return at(
        fields.passphrase ?? fields.key,
        `${key} cannot be decrypted: ${fields.passphrase ?? 'the passphrase'} is wrong.`,
      );
    }
    if (![...text.matchAll(pemBlock)].some((block) => block[1]?.includes('PRIVATE KEY'))) {
      if (text.includes('-----BEGIN CERTIFICATE-----')) {
        return at(fields.key, `${key} holds a certificate, not a private key.`);
      }
      return at(fields.key, `${key} holds no PEM private key.`);
    }
    return at(fields.key, `${key} holds a private key that cannot be parsed.`);
  }
  const type = parsed.asymmetricKeyType ?? 'unknown';
  if (files.keyTypes !== undefined && !files.keyTypes.includes(type)) {
    return at(
      fields.key,
      `${key} holds a key of type ${type.toUpperCase()}; only ${files.keyTypes.map((name) => name.toUpperCase()).join(' or ')} keys can be used here.`,
    );
  }
  return { key: parsed };
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
