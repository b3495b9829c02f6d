import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type JsonWebToken from 'jsonwebtoken';
import type { JwtPayload } from 'jsonwebtoken';
import { UnauthorizedError } from '../errors.js';
import { loadOrCreateKey } from '../state/key-file.js';

/** The step a preauth token allows. */
export type PreAuthStage = 'twoFactor' | 'passwordChange';

/** What a token is for. */
export type TokenType = 'access' | 'refresh' | 'preauth' | 'service';

/** Claims of a tagd token. */
export interface TokenClaims {
  /** Account id. */
  sub: string;
  typ: TokenType;
  /** The account's token version when issued; a bumped version voids the token. */
  ver: number;
  jti: string;
  /**
   * Sign-in family id (access and refresh tokens; never service or preauth tokens). Every token
   * of one sign-in shares it, so revoking the family ends them all at once.
   */
  fam?: string;
  /**
   * When the sign-in's password (and two-factor code) was checked, epoch seconds (access and
   * refresh tokens). Renewals copy it; no token outlives `auth_time` + the session lifetime.
   */
  auth_time?: number;
  /** What a preauth token still lacks: `twoFactor` first, then `passwordChange`. */
  stage?: PreAuthStage;
  /** Expiry, epoch seconds; absent for service tokens. */
  exp?: number;
}

/** Token lifetimes, seconds. */
export interface TokenLifetimes {
  /** Default 900 (15 min). */
  access: number;
  /** Default 604,800 (7 days). */
  refresh: number;
  /** Default 300 (5 min): time to finish two-factor or a password change. */
  preauth: number;
  /**
   * Absolute lifetime of a sign-in, from the moment its password (and code) was checked: no
   * renewal or rotation issues an access or refresh token that expires later. Default 604,800
   * (168 h, `security.sessionLifetimeHours`).
   */
  session: number;
}

/** Default token lifetimes, seconds. */
export const defaultLifetimes: TokenLifetimes = {
  access: 900,
  refresh: 604_800,
  preauth: 300,
  session: 604_800,
};

/** What ties an access or refresh token to its sign-in. */
export interface SignInClaims {
  /** Sign-in family id. */
  fam: string;
  /** When the password (and code) was checked, epoch seconds. */
  authTime: number;
}

/** File name of the JWT signing key in the state directory. */
export const jwtKeyFileName = 'jwt.key';

// jsonwebtoken (CommonJS, with its lodash and semver dependencies) is required on the first
// sign or verify rather than at start: about 40 ms of CPU the daemon need not spend before
// the API answers. Verified tokens are cached, so it stays off the per-request path.
const require = createRequire(import.meta.url);
let jsonwebtoken: typeof JsonWebToken | undefined;

function jwt(): typeof JsonWebToken {
  jsonwebtoken ??= require('jsonwebtoken') as typeof JsonWebToken;
  return jsonwebtoken;
}
const issuer = 'tagd';
/** Verified tokens kept in memory, so a request does not pay for HMAC and JSON parsing again. */
const cacheLimit = 10_000;

/**
 * Issues and verifies tagd's JWTs: HS256 only (the algorithm is pinned, so `alg: none` or an
 * RS/HS confusion is refused), a 256-bit key generated on first start (0600), and a cache of
 * verified tokens until their expiry. The cache holds only what the signature proved; the
 * caller still checks the account and its token version on every request.
 */
export class TokenService {
  /**
   * Verified tokens by their signature segment (the text after the last dot), each with the
   * whole token it was proved for. Keyed so because each request brings its token as a new
   * string, which a Map must hash in full (a 300-character JWT hashes in about a third of a
   * microsecond); the 43 characters of an HS256 signature hash in a fraction of that, and a
   * hit counts only when the whole token is equal too.
   */
  private readonly verified = new Map<string, { token: string; claims: TokenClaims }>();

  private constructor(
    private readonly key: Buffer,
    private readonly lifetimes: TokenLifetimes,
    private readonly now: () => number,
  ) {}

  /**
   * Loads (or creates) the signing key in the state directory.
   * @param now epoch ms, for expiry checks. Default Date.now.
   */
  static async open(
    stateDir: string,
    lifetimes: TokenLifetimes = defaultLifetimes,
    now: () => number = Date.now,
  ): Promise<TokenService> {
    return new TokenService(
      await loadOrCreateKey(join(stateDir, jwtKeyFileName), 32),
      lifetimes,
      now,
    );
  }

  /** Lifetime of a token type, or of a whole sign-in (`session`), seconds. */
  lifetimeOf(type: keyof TokenLifetimes): number {
    return this.lifetimes[type];
  }

  /** End of a sign-in whose password was checked at `authTime` (epoch seconds), epoch seconds. */
  sessionEnd(authTime: number): number {
    return authTime + this.lifetimes.session;
  }

  /**
   * Signs a token for an account. Access and refresh tokens need their sign-in (`signIn`) and
   * expire at the sign-in's end at the latest; service tokens never expire.
   * @throws Error when an access or refresh token is asked for without its sign-in.
   */
  issue(
    type: TokenType,
    account: { id: string; tokenVersion: number },
    extra: { signIn?: SignInClaims; stage?: PreAuthStage } = {},
  ): { token: string; claims: TokenClaims } {
    const issuedAt = Math.floor(this.now() / 1000);
    const { signIn } = extra;
    const session = type === 'access' || type === 'refresh';
    if (session && signIn === undefined) {
      throw new Error(`${type} tokens need their sign-in family`);
    }
    let exp = type === 'service' ? undefined : issuedAt + this.lifetimes[type];
    if (signIn && exp !== undefined && session) {
      exp = Math.min(exp, this.sessionEnd(signIn.authTime));
    }
    const claims: TokenClaims = {
      sub: account.id,
      typ: type,
      ver: account.tokenVersion,
      jti: randomUUID(),
      ...(session && signIn ? { fam: signIn.fam, auth_time: signIn.authTime } : {}),
      ...(extra.stage ? { stage: extra.stage } : {}),
      ...(exp === undefined ? {} : { exp }),
    };
    const token = jwt().sign({ ...claims, iat: issuedAt, iss: issuer }, this.key, {
      algorithm: 'HS256',
      noTimestamp: true,
    });
    return { token, claims };
  }

  /**
   * Verifies a token's signature, algorithm, issuer, expiry and type.
   * @throws UnauthorizedError for anything else.
   */
  verify(token: string, expected: readonly TokenType[]): TokenClaims {
    const key = token.slice(token.lastIndexOf('.') + 1);
    const cached = this.verified.get(key);
    let claims: TokenClaims;
    if (cached === undefined || cached.token !== token) {
      claims = this.verifySignature(token);
      if (this.verified.size >= cacheLimit) this.pruneCache();
      this.verified.set(key, { token, claims });
    } else {
      claims = cached.claims;
      if (claims.exp !== undefined && claims.exp * 1000 <= this.now()) {
        this.verified.delete(key);
        throw new UnauthorizedError('The token has expired.');
      }
    }
    // Checked on every use, not only through exp: a shorter sessionLifetimeHours in the profile
    // also ends the sign-ins that were made before the change.
    if (claims.auth_time !== undefined && this.sessionEnd(claims.auth_time) * 1000 <= this.now()) {
      this.verified.delete(key);
      throw new UnauthorizedError('The sign-in has expired; sign in again.');
    }
    if (!expected.includes(claims.typ)) {
      throw new UnauthorizedError(`A ${claims.typ} token cannot be used here.`);
    }
    return claims;
  }

  private verifySignature(token: string): TokenClaims {
    let payload: JwtPayload | string;
    try {
      payload = jwt().verify(token, this.key, {
        algorithms: ['HS256'],
        issuer,
        clockTimestamp: Math.floor(this.now() / 1000),
      });
    } catch (error) {
      if (error instanceof jwt().TokenExpiredError)
        throw new UnauthorizedError('The token has expired.');
      throw new UnauthorizedError('The token is invalid.');
    }
    if (typeof payload === 'string' || !isClaims(payload))
      throw new UnauthorizedError('The token is invalid.');
    return {
      sub: payload.sub,
      typ: payload.typ,
      ver: payload.ver,
      jti: payload.jti,
      ...(payload.fam !== undefined ? { fam: payload.fam } : {}),
      ...(payload.auth_time !== undefined ? { auth_time: payload.auth_time } : {}),
      ...(payload.stage ? { stage: payload.stage } : {}),
      ...(payload.exp !== undefined ? { exp: payload.exp } : {}),
    };
  }

  // Expired entries first; if the cache is still full, the oldest half goes (Map keeps order).
  private pruneCache(): void {
    const nowSeconds = this.now() / 1000;
    for (const [key, { claims }] of this.verified) {
      if (claims.exp !== undefined && claims.exp <= nowSeconds) this.verified.delete(key);
    }
    if (this.verified.size < cacheLimit) return;
    let drop = this.verified.size / 2;
    for (const key of this.verified.keys()) {
      if (drop-- <= 0) break;
      this.verified.delete(key);
    }
  }
}

const tokenTypes: readonly string[] = ['access', 'refresh', 'preauth', 'service'];

// Access and refresh tokens must name their sign-in: one issued before sign-in families existed
// (or forged without one) could otherwise never be revoked with its sign-in.
function isClaims(payload: JwtPayload): payload is JwtPayload & TokenClaims {
  const session = payload.typ === 'access' || payload.typ === 'refresh';
  return (
    typeof payload.sub === 'string' &&
    typeof payload.typ === 'string' &&
    tokenTypes.includes(payload.typ) &&
    typeof payload.ver === 'number' &&
    typeof payload.jti === 'string' &&
    (payload.typ === 'service' ? payload.exp === undefined : typeof payload.exp === 'number') &&
    (session
      ? typeof payload.fam === 'string' &&
        payload.fam !== '' &&
        typeof payload.auth_time === 'number'
      : payload.fam === undefined && payload.auth_time === undefined)
  );
}
