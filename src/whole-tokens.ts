/**
 * Replacing secrets in an error text as whole tokens, never inside other words. Replacing every
 * occurrence of a credential wherever it appears is worse than useless for a short one: a
 * username `u` turns "must" into "mthe brokerst", which mangles the text and spells the
 * credential out to whoever reads it.
 */

// A letter, digit or underscore: what a token cannot be glued to.
const wordCharacter = /[\p{L}\p{N}_]/u;

/**
 * Returns `text` with each of `tokens` replaced by `replacement` where it stands as a whole
 * token: a token that starts with a letter, digit or underscore must not follow one, and one
 * that ends with such a character must not be followed by one (so `u` is replaced in "user u
 * refused" but not in "must", and `/hooks/abc` in "host:8443/hooks/abc?x" too). One pass,
 * longest token first: a replacement is never searched again, so a short token cannot match
 * inside it.
 * @param tokens the secrets; empty ones are ignored.
 */
export function replaceWholeTokens(
  text: string,
  tokens: readonly string[],
  replacement: string,
): string {
  const alternatives = [...new Set(tokens)]
    .filter((token) => token.length > 0)
    .sort((a, b) => b.length - a.length)
    .map((token) => {
      const before = wordCharacter.test(token[0] as string) ? '(?<![\\p{L}\\p{N}_])' : '';
      const after = wordCharacter.test(token.at(-1) as string) ? '(?![\\p{L}\\p{N}_])' : '';
      return `${before}${escapeRegExp(token)}${after}`;
    });
  if (alternatives.length === 0) return text;
  return text.replace(new RegExp(alternatives.join('|'), 'gu'), replacement);
}

/** Every URL written with a scheme (`https://…`, `mqtts://…`), up to a space or quote. */
const urlPattern = /[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/giu;

/**
 * Returns `text` with every URL written with a scheme replaced by `replacement` (punctuation
 * that ends the sentence after it is kept).
 */
export function replaceUrls(text: string, replacement: string): string {
  return text.replace(urlPattern, (url) => {
    const trailing = /[.,;:!?)\]]+$/u.exec(url)?.[0] ?? '';
    return `${replacement}${trailing}`;
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
