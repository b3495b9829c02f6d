/**
 * The OPC UA certificate store of tagd: `<state>/opcua/pki`, laid out as node-opcua's
 * certificate manager expects (`own/` the client's certificate and key, `trusted/certs/` the
 * server certificates trusted, `rejected/` the ones refused). A server whose certificate is not
 * trusted is refused and its certificate lands in `rejected/`; trusting it is moving the file to
 * `trusted/certs/`, which `tagd opcua trust` does. Plain file work: this module does not load
 * node-opcua, so the CLI stays quick.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';

/**
 * Mode of the PKI folders: the owner only. The folder holds the client's private key
 * (`own/private/`), and which servers are trusted is for tagd's user alone to change.
 */
export const pkiDirMode = 0o700;

/** The PKI folder inside a state directory. */
export function opcuaPkiDir(stateDir: string): string {
  return join(stateDir, 'opcua', 'pki');
}

/** Where the trusted server certificates are, inside a PKI folder. */
export function trustedCertsDir(pkiDir: string): string {
  return join(pkiDir, 'trusted', 'certs');
}

/** Where refused server certificates land, inside a PKI folder. */
export function rejectedCertsDir(pkiDir: string): string {
  return join(pkiDir, 'rejected');
}

/** A certificate of the store. */
export interface PkiCertificate {
  state: 'trusted' | 'rejected';
  /** Absolute path of the file. */
  file: string;
  /** SHA-1 of the DER certificate, lowercase hex (what OPC UA calls the thumbprint). */
  thumbprint: string;
  /** Subject, one `key=value` per line as node:crypto prints it. */
  subject: string;
  /** End of validity, ISO 8601. */
  validTo: string;
}

/** A trust request that names no certificate, or more than one. */
export class PkiSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PkiSelectionError';
  }
}

/** Parses a PEM (the first certificate of a chain) or DER file; undefined when it is neither. */
export function parseCertificate(bytes: Buffer): X509Certificate | undefined {
  try {
    return new X509Certificate(bytes);
  } catch {
    return undefined;
  }
}

/** The OPC UA thumbprint of a certificate: SHA-1 of its DER, lowercase hex without colons. */
export function thumbprintOf(certificate: X509Certificate): string {
  return certificate.fingerprint.replaceAll(':', '').toLowerCase();
}

async function certificatesIn(
  folder: string,
  state: PkiCertificate['state'],
): Promise<PkiCertificate[]> {
  const names = await readdir(folder).catch(() => [] as string[]);
  const found: PkiCertificate[] = [];
  for (const name of names.sort()) {
    if (!/\.(pem|der|crt|cer)$/i.test(name)) continue;
    const file = join(folder, name);
    const certificate = parseCertificate(await readFile(file).catch(() => Buffer.alloc(0)));
    if (certificate === undefined) continue;
    found.push({
      state,
      file,
      thumbprint: thumbprintOf(certificate),
      subject: certificate.subject,
      validTo: new Date(certificate.validTo).toISOString(),
    });
  }
  return found;
}

/** Every trusted and rejected server certificate of the store, trusted first. */
export async function listPkiCertificates(pkiDir: string): Promise<PkiCertificate[]> {
  return [
    ...(await certificatesIn(trustedCertsDir(pkiDir), 'trusted')),
    ...(await certificatesIn(rejectedCertsDir(pkiDir), 'rejected')),
  ];
}

/** What {@link trustCertificate} did. */
export interface TrustOutcome {
  certificate: PkiCertificate;
  /** `moved` from rejected/, `copied` from a file elsewhere, or `already` trusted. */
  action: 'moved' | 'copied' | 'already';
}

/**
 * Trusts a server certificate: `selector` is a file (a certificate of `rejected/`, by path or
 * by name, or a PEM/DER file anywhere) or the thumbprint, or its first 8 or more hex digits,
 * of a rejected certificate. A rejected file is moved to `trusted/certs/`; another file is
 * copied there as PEM. A running driver picks the change up on its next connection attempt.
 * @throws PkiSelectionError when nothing or more than one certificate matches.
 */
export async function trustCertificate(pkiDir: string, selector: string): Promise<TrustOutcome> {
  const rejected = await certificatesIn(rejectedCertsDir(pkiDir), 'rejected');
  const trusted = await certificatesIn(trustedCertsDir(pkiDir), 'trusted');
  const inRejected = rejected.find(
    (entry) => basename(entry.file) === selector || entry.file === resolve(selector),
  );
  if (inRejected) return moveToTrusted(pkiDir, inRejected, trusted);

  const path = resolve(selector);
  if (
    await stat(path).then(
      (info) => info.isFile(),
      () => false,
    )
  ) {
    const certificate = parseCertificate(await readFile(path));
    if (certificate === undefined) {
      throw new PkiSelectionError(`${path} holds no PEM or DER certificate.`);
    }
    const thumbprint = thumbprintOf(certificate);
    const known = trusted.find((entry) => entry.thumbprint === thumbprint);
    if (known) return { certificate: known, action: 'already' };
    const wasRejected = rejected.find((entry) => entry.thumbprint === thumbprint);
    if (wasRejected) return moveToTrusted(pkiDir, wasRejected, trusted);
    await mkdir(trustedCertsDir(pkiDir), { recursive: true, mode: pkiDirMode });
    const file = join(trustedCertsDir(pkiDir), `${fileStem(certificate)}[${thumbprint}].pem`);
    await writeFile(file, certificate.toString(), { mode: 0o644 });
    return {
      certificate: {
        state: 'trusted',
        file,
        thumbprint,
        subject: certificate.subject,
        validTo: new Date(certificate.validTo).toISOString(),
      },
      action: 'copied',
    };
  }

  const wanted = selector.replaceAll(':', '').toLowerCase();
  if (!/^[0-9a-f]{8,40}$/.test(wanted)) {
    throw new PkiSelectionError(
      `'${selector}' is neither a certificate file nor a thumbprint (8 to 40 hex digits).`,
    );
  }
  const matches = rejected.filter((entry) => entry.thumbprint.startsWith(wanted));
  if (matches.length > 1) {
    throw new PkiSelectionError(
      `${matches.length} rejected certificates start with ${wanted}; give more digits.`,
    );
  }
  const [match] = matches;
  if (match) return moveToTrusted(pkiDir, match, trusted);
  const known = trusted.find((entry) => entry.thumbprint.startsWith(wanted));
  if (known) return { certificate: known, action: 'already' };
  throw new PkiSelectionError(
    `No rejected certificate has the thumbprint ${wanted} (in ${rejectedCertsDir(pkiDir)}).`,
  );
}

async function moveToTrusted(
  pkiDir: string,
  entry: PkiCertificate,
  trusted: readonly PkiCertificate[],
): Promise<TrustOutcome> {
  await mkdir(trustedCertsDir(pkiDir), { recursive: true, mode: pkiDirMode });
  const known = trusted.find((other) => other.thumbprint === entry.thumbprint);
  const target = known?.file ?? join(trustedCertsDir(pkiDir), basename(entry.file));
  await rename(entry.file, target);
  return { certificate: { ...entry, state: 'trusted', file: target }, action: 'moved' };
}

/** A file name from the certificate's common name, as node-opcua names its files. */
function fileStem(certificate: X509Certificate): string {
  const commonName = /^CN=(.*)$/m.exec(certificate.subject)?.[1] ?? 'certificate';
  return commonName.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 64) || 'certificate';
}
