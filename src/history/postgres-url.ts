/**
 * Keeping the password of a PostgreSQL connection URL out of logs and error messages.
 */
import { replaceWholeTokens } from '../whole-tokens.js';

/** What replaces a password. */
export const passwordMask = '********';

/**
 * The URL with its password replaced by `********` (in the user-info part and in a
 * `password=` query parameter). A string that is not a URL is masked by pattern instead.
 */
export function maskPostgresUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = passwordMask;
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', passwordMask);
    return parsed.toString().replace(encodeURIComponent(passwordMask), passwordMask);
  } catch {
    return url
      .replace(/(\/\/[^:/@]*:)[^@]*@/, `$1${passwordMask}@`)
      .replace(/(password=)[^&\s]*/gi, `$1${passwordMask}`);
  }
}

/** The password of a connection URL (decoded), or undefined when it has none. */
export function postgresUrlPassword(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const password = parsed.password
      ? decodeURIComponent(parsed.password)
      : (parsed.searchParams.get('password') ?? '');
    return password === '' ? undefined : password;
  } catch {
    return /\/\/[^:/@]*:([^@]*)@/.exec(url)?.[1];
  }
}

/**
 * Returns `text` with the URL masked and the URL's password (raw and percent-encoded) masked
 * where it stands as a whole token, for messages that may quote what the driver was given. Not
 * inside words: a short password would otherwise be spelled out by the holes it cuts.
 */
export function maskPassword(text: string, url: string): string {
  const password = postgresUrlPassword(url);
  const out = text.split(url).join(maskPostgresUrl(url));
  if (password === undefined) return out;
  return replaceWholeTokens(out, [password, encodeURIComponent(password)], passwordMask);
}
