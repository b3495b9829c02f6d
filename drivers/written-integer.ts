/**
 * The integer a client wrote as a JSON number, for the write checks of integer tags. The JSON
 * parser hands over the nearest double, which is not always the number written: beyond ±2^53
 * doubles skip integers (`9007199254740993` arrives as 9007199254740992), and a fraction finer
 * than a double's step vanishes (`1.0000000000000001` arrives as 1). Writing either would put a
 * value on the device that the client never sent, so both are refused; integers beyond ±2^53
 * go as decimal strings instead.
 */

/**
 * What a JSON number names for an integer tag: the integer itself (exact, as BigInt), or why it
 * names none: `fraction` (not a whole number as written), `inexact` (at or beyond ±2^53, where a
 * double cannot tell neighbouring integers apart: whatever was written, it may not be `value`).
 * @param value the parsed number.
 * @param text the number as the client spelt it (its JSON text), when known; without it only
 *   `value` is judged.
 */
export function writtenInteger(
  value: number,
  text: string | undefined,
): bigint | 'fraction' | 'inexact' {
  if (!Number.isInteger(value)) return 'fraction';
  if (text !== undefined) {
    const written = decimalInteger(text);
    if (written === 'fraction') return 'fraction';
    if (written === undefined || written !== BigInt(value)) return 'inexact';
  }
  // 2^53 itself is a double, but so is what 2^53 + 1 rounds to: it cannot be told apart.
  if (!Number.isSafeInteger(value)) return 'inexact';
  return BigInt(value);
}

/** Beyond 10^40 no tag type holds an integer; the exponent is not expanded further. */
const largestDigits = 40;

/**
 * The integer that decimal `text` (JSON number syntax: sign, digits, fraction, exponent) names
 * exactly: `"1.50e1"` is 15n; `fraction` when it has a fractional part; undefined when it is not
 * a decimal number or has more than 40 integer digits.
 */
export function decimalInteger(text: string): bigint | 'fraction' | undefined {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return undefined;
  const [, sign, whole = '', fraction = '', exponentText = '0'] = match;
  // value = digits × 10^exponent, digits without leading or trailing zeros.
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return 0n;
  let exponent = Number(exponentText) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  if (exponent < 0) return 'fraction';
  if (digits.length + exponent > largestDigits) return undefined;
  const magnitude = BigInt(digits) * 10n ** BigInt(exponent);
  return sign === '-' ? -magnitude : magnitude;
}
