import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import {
  canonicalTerms,
  editionsWith,
  type LicenseTerms,
  loadLicense,
  unlicensed,
} from '../../src/license/license.js';
import { profileFileLimits } from '../../src/profile/profile-file.js';
import { tempDir } from '../helpers/temp-dir.js';

// A key pair of the test's own stands in for the vendor's; its public key is the trusted one.
const vendor = generateKeyPairSync('ed25519');
const stranger = generateKeyPairSync('ed25519');
const trusted = [vendor.publicKey];

const serverTerms: LicenseTerms = {
  id: 'test-0001',
  licensee: 'Acme Plant 4',
  edition: 'server',
  issued: '2026-01-01',
  expires: null,
};

function signed(terms: LicenseTerms, key: KeyObject = vendor.privateKey) {
  return { license: terms, signature: sign(null, canonicalTerms(terms), key).toString('base64') };
}

async function licenseFile(t: ExecutionContext, document: unknown): Promise<string> {
  const file = join(await tempDir(t), 'license.json');
  await writeFile(file, typeof document === 'string' ? document : JSON.stringify(document));
  return file;
}

test('a server license grants data relay', async (t) => {
  const file = await licenseFile(t, signed(serverTerms));
  const state = await loadLicense(file, trusted);
  t.deepEqual(state, {
    edition: 'server',
    licensee: 'Acme Plant 4',
    features: new Set(['dataRelay']),
  });
});

test('an enterprise license grants data relay and reports its expiry', async (t) => {
  const terms: LicenseTerms = { ...serverTerms, edition: 'enterprise', expires: '2027-06-30' };
  const file = await licenseFile(t, signed(terms));
  const state = await loadLicense(file, trusted, Date.parse('2027-01-01T00:00:00Z'));
  t.deepEqual(state, {
    edition: 'enterprise',
    licensee: 'Acme Plant 4',
    expires: '2027-06-30',
    features: new Set(['dataRelay']),
  });
});

test('a standard license is valid but has no data relay', async (t) => {
  const file = await licenseFile(t, signed({ ...serverTerms, edition: 'standard' }));
  const state = await loadLicense(file, trusted);
  t.is(state.edition, 'standard');
  t.is(state.problem, undefined);
  t.false(state.features.has('dataRelay'));
  t.is(state.features.size, 0);
});

test('no license file: unlicensed, no problem reported', async (t) => {
  const state = await loadLicense(undefined, trusted);
  t.is(state, unlicensed);
  t.is(state.edition, 'unlicensed');
  t.is(state.features.size, 0);
  t.is(state.problem, undefined);
});

test('a missing file leaves the installation unlicensed and says why', async (t) => {
  const file = join(await tempDir(t), 'nowhere.json');
  const state = await loadLicense(file, trusted);
  t.is(state.edition, 'unlicensed');
  t.is(state.features.size, 0);
  t.is(state.problem, `Cannot read the license file ${file}: no such file.`);
});

test('a FIFO or an oversized file as license is refused at once, without reading it', async (t) => {
  const folder = await tempDir(t);
  const fifo = join(folder, 'license.fifo');
  execFileSync('mkfifo', [fifo]);
  // Without a writer, a blocking open of the FIFO would never return.
  t.is(
    (await loadLicense(fifo, trusted)).problem,
    `Cannot read the license file ${fifo}: it is not a regular file (a FIFO, socket or device).`,
  );
  const huge = join(folder, 'huge.json');
  await writeFile(huge, Buffer.alloc(profileFileLimits.license + 1, 32));
  t.is(
    (await loadLicense(huge, trusted)).problem,
    `Cannot read the license file ${huge}: it is larger than the limit of 1 MiB.`,
  );
});

test('altered terms (standard raised to enterprise after signing) are refused', async (t) => {
  const document = signed({ ...serverTerms, edition: 'standard' });
  document.license.edition = 'enterprise';
  const file = await licenseFile(t, document);
  const state = await loadLicense(file, trusted);
  t.deepEqual(state, {
    edition: 'unlicensed',
    features: new Set(),
    problem: `License file ${file} is not signed by the vendor (altered or foreign).`,
  });
});

test('an altered signature is refused', async (t) => {
  const document = signed(serverTerms);
  const bytes = Buffer.from(document.signature, 'base64');
  bytes[10] = (bytes[10] ?? 0) ^ 0x01;
  document.signature = bytes.toString('base64');
  const file = await licenseFile(t, document);
  const state = await loadLicense(file, trusted);
  t.is(state.edition, 'unlicensed');
  t.is(state.problem, `License file ${file} is not signed by the vendor (altered or foreign).`);
});

test('a license signed by a foreign key is refused', async (t) => {
  const file = await licenseFile(t, signed(serverTerms, stranger.privateKey));
  const state = await loadLicense(file, trusted);
  t.is(state.edition, 'unlicensed');
  t.false(state.features.has('dataRelay'));
  t.is(state.problem, `License file ${file} is not signed by the vendor (altered or foreign).`);
  // The same file is accepted by whoever trusts that key: only the key decided.
  t.is((await loadLicense(file, [stranger.publicKey])).edition, 'server');
});

test('a license is valid through its last day and refused the day after', async (t) => {
  const file = await licenseFile(t, signed({ ...serverTerms, expires: '2026-03-31' }));
  const lastMoment = Date.parse('2026-03-31T23:59:59.999Z');
  t.is((await loadLicense(file, trusted, lastMoment)).edition, 'server');
  const state = await loadLicense(file, trusted, lastMoment + 1);
  t.deepEqual(state, {
    edition: 'unlicensed',
    features: new Set(),
    problem: 'License test-0001 for Acme Plant 4 expired on 2026-03-31.',
  });
});

test('the order of the keys in the file does not matter: the canonical terms are signed', async (t) => {
  const { license, signature } = signed(serverTerms);
  const reordered = Object.fromEntries(Object.entries(license).reverse());
  const file = await licenseFile(t, { signature, license: reordered });
  t.is((await loadLicense(file, trusted)).edition, 'server');
});

test('malformed files are refused, each saying what is wrong', async (t) => {
  const notJson = await licenseFile(t, '{"license": ');
  t.regex(
    (await loadLicense(notJson, trusted)).problem ?? '',
    /^License file .* cannot be read as JSON: /,
  );

  const notALicense = await licenseFile(t, { edition: 'server' });
  t.is(
    (await loadLicense(notALicense, trusted)).problem,
    `License file ${notALicense} is not a tagd license.`,
  );

  const unknownEdition = signed(serverTerms);
  (unknownEdition.license as { edition: string }).edition = 'platinum';
  const badTerms = await licenseFile(t, unknownEdition);
  t.is(
    (await loadLicense(badTerms, trusted)).problem,
    `License file ${badTerms} has malformed terms.`,
  );

  const extraField = await licenseFile(t, { ...signed(serverTerms), comment: 'hi' });
  t.is(
    (await loadLicense(extraField, trusted)).problem,
    `License file ${extraField} is not a tagd license.`,
  );
  for (const file of [notJson, notALicense, badTerms, extraField]) {
    t.is((await loadLicense(file, trusted)).features.size, 0, file);
  }
});

test('the demo license is a server license signed with the vendor key', async (t) => {
  const demo = new URL('../../config/demo-license.json', import.meta.url).pathname;
  const state = await loadLicense(demo);
  t.is(state.edition, 'server');
  t.is(state.licensee, 'tagd demo (not for production)');
  t.true(state.features.has('dataRelay'));
  t.is((await loadLicense(demo, trusted)).edition, 'unlicensed', 'another key does not accept it');
});

test('data relay is in the server and enterprise editions', (t) => {
  t.deepEqual(editionsWith('dataRelay'), ['server', 'enterprise']);
});
