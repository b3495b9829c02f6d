/**
 * The integer a DBC number names exactly. The parser reads numbers as doubles, which skip
 * integers beyond ±2^53: an offset of -9223372036854775807 or a VAL_ entry for
 * 18446744073709551615 would otherwise land on a neighbouring integer.
 */

/** Beyond 10^40 nothing a DBC describes (64-bit raw values, their scaling) needs exact digits. */
const largestDigits = 40;

/**
 * The integer that `text` (a DBC number token: digits, optional fraction and exponent, no sign)
 * names, negated when `negative`; undefined when it has a fractional part or more than 40 integer
 * digits. `"1E+019"` is 10^19 exactly, `"250.0"` is 250.
 */
export function decimalInteger(text: string, negative: boolean): bigint | undefined {
  const match = /^(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (match === null) return undefined;
  const [, whole = '', fraction = '', exponentText = '0'] = match;
  // value = digits × 10^exponent, digits without leading or trailing zeros.
  let digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return 0n;
  let exponent = Number(exponentText) - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  if (exponent < 0 || digits.length + exponent > largestDigits) return undefined;
  const magnitude = BigInt(digits) * 10n ** BigInt(exponent);
  return negative ? -magnitude : magnitude;
}
