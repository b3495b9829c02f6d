/**
 * The vendor's tool: signs license terms with an Ed25519 private key.
 * `npx tsx src/license/sign-license.ts PRIVATE_KEY.pem TERMS.json > license.json`
 * TERMS.json holds `{ id, licensee, edition, issued, expires }`.
 */
import { createPrivateKey, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { canonicalTerms, licenseTermsSchema } from './license.js';

const [keyFile, termsFile] = process.argv.slice(2);
if (!keyFile || !termsFile) {
  process.stderr.write('usage: sign-license PRIVATE_KEY.pem TERMS.json\n');
  process.exitCode = 2;
} else {
  const terms = licenseTermsSchema.parse(JSON.parse(readFileSync(termsFile, 'utf8')));
  const signature = sign(null, canonicalTerms(terms), createPrivateKey(readFileSync(keyFile)));
  process.stdout.write(
    `${JSON.stringify({ license: terms, signature: signature.toString('base64') }, null, 2)}\n`,
  );
}
