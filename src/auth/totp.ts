import { Secret, TOTP } from 'otpauth';

/** TOTP parameters (RFC 6238): 6 digits, 30 s steps, SHA-1 as authenticator apps expect. */
const period = 30;

function totpFor(username: string, base32Secret: string): TOTP {
  return new TOTP({
    issuer: 'tagd',
    label: username,
    algorithm: 'SHA1',
    digits: 6,
    period,
    secret: Secret.fromBase32(base32Secret),
  });
}

/** A new random TOTP secret (160 bits), base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://` URI an authenticator app enrols from. */
export function totpUri(username: string, base32Secret: string): string {
  return totpFor(username, base32Secret).toString();
}

/** The code for a given time (for tests and the CLI's check). */
export function totpCode(username: string, base32Secret: string, atMs: number): string {
  return totpFor(username, base32Secret).generate({ timestamp: atMs });
}

/**
 * Checks a code against the steps around `atMs` (±1 step for clock drift).
 * @returns the time step the code belongs to, or undefined when it matches none.
 */
export function matchTotpStep(
  username: string,
  base32Secret: string,
  code: string,
  atMs: number,
): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpFor(username, base32Secret).validate({
    token: code,
    timestamp: atMs,
    window: 1,
  });
  if (delta === null) return undefined;
  return Math.floor(atMs / 1000 / period) + delta;
}
