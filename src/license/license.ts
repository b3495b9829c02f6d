/**
 * The license: a JSON file whose `license` object is signed with the
 * vendor's Ed25519 key. Its edition decides the licensed features; a missing, expired, altered
 * or foreign-signed file leaves the installation unlicensed (the daemon still runs; licensed
 * features do not).
 */
import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { z } from 'zod';
import { profileFileLimits, readProfileFile } from '../profile/profile-file.js';
import { vendorPublicKeyPem } from './vendor-key.js';

/** Editions, from smallest to largest. */
export const editions = ['standard', 'server', 'enterprise'] as const;
/** An edition. */
export type Edition = (typeof editions)[number];
/** A licensed feature. */
export type Feature = 'dataRelay';

/** What each edition includes (spec §1: data relay is in the server and enterprise editions). */
export const featuresByEdition: Record<Edition, readonly Feature[]> = {
  standard: [],
  server: ['dataRelay'],
  enterprise: ['dataRelay'],
};

/** The signed part of a license file. */
export const licenseTermsSchema = z.strictObject({
  id: z.string().min(1),
  licensee: z.string().min(1),
  edition: z.enum(editions),
  issued: z.iso.date(),
  /** Last day of validity (UTC), or null for a license that does not expire. */
  expires: z.iso.date().nullable(),
});

/** The signed terms. */
export type LicenseTerms = z.infer<typeof licenseTermsSchema>;

const licenseFileSchema = z.strictObject({
  license: z.unknown(),
  signature: z.string().min(1),
});

/** The license in force. */
export interface LicenseState {
  /** The edition, or `unlicensed` when no valid license is present. */
  edition: Edition | 'unlicensed';
  licensee?: string;
  /** Last valid day, when the license expires. */
  expires?: string;
  features: ReadonlySet<Feature>;
  /** Why no license is in force, when a file was given but refused. */
  problem?: string;
}

/** The vendor's public key, which signs real licenses. */
export const vendorPublicKey: KeyObject = createPublicKey(vendorPublicKeyPem);

/** The canonical bytes that are signed: the terms as JSON with keys in sorted order. */
export function canonicalTerms(terms: LicenseTerms): Buffer {
  // Code-point order: the signed bytes must not depend on the machine's locale.
  const sorted = Object.fromEntries(
    Object.entries(terms).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return Buffer.from(JSON.stringify(sorted), 'utf8');
}

/** No license at all. */
export const unlicensed: LicenseState = { edition: 'unlicensed', features: new Set() };

/**
 * Reads and checks a license file.
 * @param trustedKeys public keys whose signature is accepted. Default: the vendor key.
 * @param now epoch ms, for expiry. Default Date.now().
 */
export async function loadLicense(
  file: string | undefined,
  trustedKeys: readonly KeyObject[] = [vendorPublicKey],
  now = Date.now(),
): Promise<LicenseState> {
  if (file === undefined) return unlicensed;
  let text: string;
  try {
    // A regular file of bounded size only: a FIFO or device here must not hang the start-up.
    text = (await readProfileFile(file, 'the license file', profileFileLimits.license)).toString(
      'utf8',
    );
  } catch (error) {
    return refused((error as Error).message);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return refused(`License file ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
  const parsedFile = licenseFileSchema.safeParse(document);
  if (!parsedFile.success) return refused(`License file ${file} is not a tagd license.`);
  const terms = licenseTermsSchema.safeParse(parsedFile.data.license);
  if (!terms.success) return refused(`License file ${file} has malformed terms.`);
  const signature = Buffer.from(parsedFile.data.signature, 'base64');
  const signed = trustedKeys.some((key) =>
    verify(null, canonicalTerms(terms.data), key, signature),
  );
  if (!signed)
    return refused(`License file ${file} is not signed by the vendor (altered or foreign).`);
  const { edition, licensee, expires } = terms.data;
  if (expires !== null && Date.parse(`${expires}T23:59:59.999Z`) < now) {
    return refused(`License ${terms.data.id} for ${licensee} expired on ${expires}.`);
  }
  return {
    edition,
    licensee,
    ...(expires !== null ? { expires } : {}),
    features: new Set(featuresByEdition[edition]),
  };
}

/** The editions that include a feature, for messages ("needs the server or enterprise edition"). */
export function editionsWith(feature: Feature): Edition[] {
  return editions.filter((edition) => featuresByEdition[edition].includes(feature));
}

/** How each feature is named in messages and documentation. */
export const featureNames: Record<Feature, string> = { dataRelay: 'data relay' };

/** "server or enterprise edition": the editions that include a feature, in words. */
export function editionPhrase(feature: Feature): string {
  const names = editionsWith(feature);
  const last = names.pop();
  return `${names.length > 0 ? `${names.join(', ')} or ` : ''}${last} edition`;
}

/**
 * Why something that needs a feature is unavailable, or undefined when the license grants it:
 * "The webhook publisher needs the data relay feature of the server or enterprise edition; this
 * installation is not licensed." It never quotes the license file's problem (which may name a
 * path): the daemon's log says that.
 * @param what what needs the feature, as the sentence's subject ("The webhook publisher").
 */
export function featureUnavailable(
  license: LicenseState,
  feature: Feature,
  what: string,
): string | undefined {
  if (license.features.has(feature)) return undefined;
  const current =
    license.edition === 'unlicensed'
      ? 'this installation is not licensed'
      : `this installation is licensed for the ${license.edition} edition`;
  return `${what} needs the ${featureNames[feature]} feature of the ${editionPhrase(feature)}; ${current}.`;
}

function refused(problem: string): LicenseState {
  return { ...unlicensed, problem };
}
