import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt cost parameters (N = 2^15, r = 8, p = 1: about 32 MiB and 50–100 ms per hash). */
const cost = { N: 2 ** 15, r: 8, p: 1 } as const;
const keyLength = 32;
const saltLength = 16;
/** Shortest password accepted for a new password. */
export const minPasswordLength = 10;
/** Longest password accepted at all (keeps hashing cost bounded). */
export const maxPasswordLength = 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const N = options.N ?? cost.N;
    const r = options.r ?? cost.r;
    // Node refuses above maxmem (default 32 MiB, exactly what N=2^15, r=8 needs); leave room.
    const maxmem = 256 * N * r;
    scrypt(password, salt, keyLength, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * A random password for an account that has none yet (the initial admin, `tagd users add` on a
 * terminal): 15 random bytes, 120 bits, as 20 base64url characters.
 */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url salt and hash). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(saltLength);
  const key = await derive(password, salt, cost);
  return [
    'scrypt',
    cost.N,
    cost.r,
    cost.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/** Checks a password against a stored hash in constant time; false for malformed hashes. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

let decoy: Promise<string> | undefined;

/**
 * A hash of a random password, verified against when an account does not exist, so a failed
 * sign-in takes as long for an unknown name as for a wrong password. Made on first use.
 */
export function decoyHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
