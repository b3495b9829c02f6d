/**
 * Keeping the password of a PostgreSQL connection URL out of logs and error messages.
 */

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
 * Returns `text` with every appearance of the URL's password (raw and percent-encoded) masked,
 * for messages that may quote what the driver was given.
 */
export function maskPassword(text: string, url: string): string {
  const password = postgresUrlPassword(url);
  let out = text.split(url).join(maskPostgresUrl(url));
  if (password === undefined) return out;
  for (const form of new Set([password, encodeURIComponent(password)])) {
    out = out.split(form).join(passwordMask);
  }
  return out;
}
