/**
 * The HTTPS listener's certificate and key: read through the profile-file reader (regular
 * files of bounded size only), each parsed on its own so an error names the file at fault, then
 * checked to belong together. Shared by the listener (at start) and the start-up checks that
 * `tagd profile check` runs too.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { createSecureContext, type SecureVersion } from 'node:tls';
import { ListenerError, ProfileFileError } from '../errors.js';
import { profileFileLimits, readProfileFile } from '../profile/profile-file.js';

/** What {@link loadHttpsCredentials} needs. */
export interface HttpsCredentialFiles {
  /** PEM certificate chain file: the server certificate first, then any intermediates. */
  certFile: string;
  /** PEM private key file of the certificate, encrypted or not. */
  keyFile: string;
  /** Passphrase of an encrypted private key; never logged nor put in an error message. */
  keyPassphrase?: string;
  /** Oldest TLS version accepted. Default: `TLSv1.2`. */
  minVersion?: SecureVersion;
}

/** Usable credentials for `https.createServer`. */
export interface HttpsCredentials {
  credentials: { cert: Buffer; key: Buffer; passphrase?: string };
  /** The certificate's end of validity, ISO 8601. */
  expires: string;
  /** True when the certificate had expired at `now`. */
  expired: boolean;
}

/**
 * Reads and checks the certificate and key.
 * @param now epoch ms, to tell an expired certificate (still usable, but clients refuse it).
 * @throws ListenerError naming the file when a file is missing, unreadable, not a regular
 *   file, too large or unusable, the key does not fit the certificate or the passphrase is
 *   wrong; its `cause` is the ProfileFileError for file problems.
 */
export async function loadHttpsCredentials(
  files: HttpsCredentialFiles,
  now: number,
): Promise<HttpsCredentials> {
  const { certFile, keyFile, keyPassphrase } = files;
  const minVersion = files.minVersion ?? 'TLSv1.2';
  const cert = await readPem(certFile, 'certificate');
  const key = await readPem(keyFile, 'private key');
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch (error) {
    throw new ListenerError(
      `The HTTPS certificate file ${certFile} holds no usable PEM certificate (${reasonOf(error)}).`,
      { cause: error },
    );
  }
  try {
    createPrivateKey({ key, format: 'pem', ...passphraseOption(keyPassphrase) });
  } catch (error) {
    throw keyError(keyFile, isEncryptedPem(key), keyPassphrase, error);
  }
  const passphrase = passphraseOption(keyPassphrase);
  try {
    createSecureContext({ cert, key, ...passphrase, minVersion });
  } catch (error) {
    throw new ListenerError(
      `The HTTPS private key ${keyFile} does not belong to the certificate ${certFile} (${reasonOf(error)}).`,
      { cause: error },
    );
  }
  const validTo = new Date(certificate.validTo);
  const valid = Number.isFinite(validTo.getTime());
  return {
    credentials: { cert, key, ...passphrase },
    expires: valid ? validTo.toISOString() : certificate.validTo,
    expired: valid && validTo.getTime() <= now,
  };
}

async function readPem(file: string, what: string): Promise<Buffer> {
  try {
    return await readProfileFile(file, `the HTTPS ${what} file`, profileFileLimits.pem);
  } catch (error) {
    if (!(error instanceof ProfileFileError)) throw error;
    throw new ListenerError(error.message, { cause: error });
  }
}

function passphraseOption(passphrase: string | undefined): { passphrase?: string } {
  return passphrase === undefined ? {} : { passphrase };
}

// OpenSSL's messages never contain the passphrase, but they are not shown verbatim for the
// passphrase cases anyway: "bad decrypt" means nothing to an operator.
function keyError(
  file: string,
  encrypted: boolean,
  passphrase: string | undefined,
  error: unknown,
): ListenerError {
  if (encrypted && passphrase === undefined) {
    return new ListenerError(
      `The HTTPS private key ${file} is encrypted: set server.https.keyPassphrase.`,
    );
  }
  if (encrypted || (error as { code?: string }).code === 'ERR_OSSL_BAD_DECRYPT') {
    return new ListenerError(
      `The HTTPS private key ${file} cannot be decrypted: server.https.keyPassphrase is wrong.`,
    );
  }
  return new ListenerError(
    `The HTTPS private key file ${file} holds no usable PEM private key (${reasonOf(error)}).`,
    { cause: error },
  );
}

/** PKCS#8 (`ENCRYPTED PRIVATE KEY`) or legacy OpenSSL (`Proc-Type: 4,ENCRYPTED`) encryption. */
function isEncryptedPem(pem: Buffer): boolean {
  const text = pem.toString('latin1');
  return text.includes('-----BEGIN ENCRYPTED PRIVATE KEY-----') || text.includes('4,ENCRYPTED');
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
