/**
 * Windows-1252 text decoding, the encoding CANdb++ writes DBC files in.
 *
 * Not `new TextDecoder('windows-1252')`: Node 20's decoder treats that label as ISO-8859-1 and
 * turns 0x80–0x9F into C1 control characters instead of €, ‚, ƒ, „, …, Œ, ™ and the rest.
 */

/**
 * Code points of bytes 0x80–0x9F (WHATWG encoding standard, index windows-1252). The five bytes
 * Windows-1252 leaves undefined (0x81, 0x8D, 0x8F, 0x90, 0x9D) map to the same code point, as
 * the standard says; every other byte is its own code point (as in ISO-8859-1).
 */
const high = [
  0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021, 0x02c6, 0x2030, 0x0160, 0x2039,
  0x0152, 0x008d, 0x017d, 0x008f, 0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
  0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
];

/** Code units per String.fromCharCode call: well below any engine's argument limit. */
const chunkSize = 8192;

/** Decodes Windows-1252 bytes to a string. Every byte maps to exactly one UTF-16 code unit. */
export function decodeWindows1252(bytes: Uint8Array): string {
  const units = new Uint16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    units[i] = byte >= 0x80 && byte <= 0x9f ? (high[byte - 0x80] as number) : byte;
  }
  let text = '';
  for (let start = 0; start < units.length; start += chunkSize) {
    text += String.fromCharCode(...units.subarray(start, start + chunkSize));
  }
  return text;
}
