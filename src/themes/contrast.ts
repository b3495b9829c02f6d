/**
 * Contrast of a theme's colours (WCAG 2.2 relative luminance and contrast ratio), and the
 * colour syntaxes a theme may use. Only opaque colours are accepted (`#rgb`, `#rrggbb`,
 * `rgb(r, g, b)`, `hsl(h, s%, l%)`): a colour with alpha has no contrast of its own (it depends
 * on what lies beneath), and anything else (url(), var(), expressions, `;` or `}`) could
 * reach outside the declaration in `/theme.css`.
 */
import type { ThemeColours, ThemeVariable } from './theme-variables.js';

/** An sRGB colour, each channel 0–255. */
export interface Rgb {
  r: number;
  g: number;
  b: number;
}

const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
const channel = String.raw`(\d{1,3}(?:\.\d+)?%?)`;
const rgbFunction = new RegExp(
  String.raw`^rgb\(\s*${channel}\s*,?\s*${channel}\s*,?\s*${channel}\s*\)$`,
  'i',
);
const hslFunction =
  /^hsl\(\s*(\d{1,3}(?:\.\d+)?)(?:deg)?\s*,?\s*(\d{1,3}(?:\.\d+)?)%\s*,?\s*(\d{1,3}(?:\.\d+)?)%\s*\)$/i;

/** Longest colour text accepted. */
export const maxColourLength = 40;

/**
 * The colour a text means, or undefined when it is not one of the accepted syntaxes or a
 * channel is out of range (rgb above 255 or 100%, saturation or lightness above 100%).
 */
export function parseColour(text: string): Rgb | undefined {
  if (text.length > maxColourLength) return undefined;
  const value = text.trim();
  const hexMatch = hex.exec(value);
  if (hexMatch) {
    const digits = hexMatch[1] ?? '';
    const full = digits.length === 3 ? [...digits].map((digit) => digit + digit).join('') : digits;
    return {
      r: Number.parseInt(full.slice(0, 2), 16),
      g: Number.parseInt(full.slice(2, 4), 16),
      b: Number.parseInt(full.slice(4, 6), 16),
    };
  }
  const rgbMatch = rgbFunction.exec(value);
  if (rgbMatch) {
    const channels = rgbMatch
      .slice(1, 4)
      .map((part = '') =>
        part.endsWith('%') ? (Number(part.slice(0, -1)) * 255) / 100 : Number(part),
      );
    if (channels.some((part) => !(part >= 0 && part <= 255))) return undefined;
    const [r = 0, g = 0, b = 0] = channels;
    return { r, g, b };
  }
  const hslMatch = hslFunction.exec(value);
  if (hslMatch) {
    const [hue = 0, saturation = 0, lightness = 0] = hslMatch.slice(1, 4).map(Number);
    if (hue > 360 || saturation > 100 || lightness > 100) return undefined;
    return hslToRgb(hue, saturation / 100, lightness / 100);
  }
  return undefined;
}

// CSS Color 4's hsl-to-rgb.
function hslToRgb(hue: number, saturation: number, lightness: number): Rgb {
  const f = (n: number) => {
    const k = (n + hue / 30) % 12;
    const a = saturation * Math.min(lightness, 1 - lightness);
    return (lightness - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))) * 255;
  };
  return { r: f(0), g: f(8), b: f(4) };
}

/** WCAG relative luminance, 0 (black) to 1 (white). */
export function relativeLuminance({ r, g, b }: Rgb): number {
  const linear = (value: number) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** WCAG contrast ratio of two colours, 1 to 21. */
export function contrastRatio(a: Rgb, b: Rgb): number {
  const [light, darker] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x);
  return ((light ?? 0) + 0.05) / ((darker ?? 0) + 0.05);
}

/** Two variables the console paints one on the other, and the contrast they need. */
export interface ContrastPair {
  foreground: ThemeVariable;
  background: ThemeVariable;
  /** `text` needs 4.5:1 (7:1 in a high-contrast theme); `ui` (focus ring) needs 3:1. */
  kind: 'text' | 'ui';
}

const text = (foreground: ThemeVariable, background: ThemeVariable): ContrastPair => ({
  foreground,
  background,
  kind: 'text',
});

/**
 * Every foreground/background pair of the console's stylesheet. `line` and `chip-bg` are
 * decorative (the parts they separate are told apart by their text), so they have no pair.
 */
export const contrastPairs: readonly ContrastPair[] = [
  text('text', 'bg'),
  text('text', 'panel'),
  text('text', 'control-bg'),
  text('text', 'field-bg'),
  text('text', 'highlight-bg'),
  text('text', 'chip-bg'),
  text('muted', 'bg'),
  text('muted', 'panel'),
  text('accent', 'bg'),
  text('accent', 'panel'),
  text('on-accent', 'accent'),
  text('on-accent', 'bad'),
  text('on-accent', 'lost-bg'),
  text('bar-text', 'bar-bg'),
  text('bar-text', 'bar-current'),
  text('good', 'good-bg'),
  text('good', 'panel'),
  text('stale', 'stale-bg'),
  text('off', 'off-bg'),
  text('off', 'panel'),
  text('bad', 'bad-bg'),
  text('bad', 'panel'),
  { foreground: 'focus', background: 'bg', kind: 'ui' },
  { foreground: 'focus', background: 'panel', kind: 'ui' },
  { foreground: 'field-line', background: 'field-bg', kind: 'ui' },
];

/** A pair below its minimum. */
export interface ContrastFailure extends ContrastPair {
  /** The ratio found, rounded down to two decimals. */
  ratio: number;
  /** The ratio needed. */
  minimum: number;
}

/**
 * The pairs of `colours` below their minimum: 4.5:1 for text (7:1 when `highContrast`), 3:1
 * for the focus ring and input borders. A colour that does not parse counts as failing.
 */
export function contrastFailures(colours: ThemeColours, highContrast = false): ContrastFailure[] {
  const failures: ContrastFailure[] = [];
  for (const pair of contrastPairs) {
    const minimum = pair.kind === 'ui' ? 3 : highContrast ? 7 : 4.5;
    const foreground = parseColour(colours[pair.foreground]);
    const background = parseColour(colours[pair.background]);
    const ratio =
      foreground && background ? Math.floor(contrastRatio(foreground, background) * 100) / 100 : 0;
    if (ratio < minimum) failures.push({ ...pair, ratio, minimum });
  }
  return failures;
}

/** One line per failure, e.g. `--muted on --panel: 3.1:1, needs 4.5:1`. */
export function describeFailure(failure: ContrastFailure): string {
  return `--${failure.foreground} on --${failure.background}: ${failure.ratio}:1, needs ${failure.minimum}:1`;
}
