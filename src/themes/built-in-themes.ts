/**
 * The themes every installation has: `light` (the console's own colours), `dark`, and
 * `high-contrast` for a control room (black ground, every text pair at least 7:1). Each is
 * checked by src/themes/contrast.ts in the tests and by axe in the console's browser test.
 */
import type { ThemeColours } from './theme-variables.js';

/** A theme as served by `GET /api/v2/Themes` and `/theme.css`. */
export interface Theme {
  /** Identifier used in `data-theme` and stored per account; lower-case, `-` between words. */
  name: string;
  /** Shown in the theme picker. */
  label: string;
  /** Whether it ships with tagd (custom themes are the profile's). */
  builtIn: boolean;
  /** `light` or `dark`: form controls and scroll bars follow (CSS `color-scheme`). */
  colorScheme: 'light' | 'dark';
  /** Product name shown in the console's top bar instead of "tagd"; custom themes only. */
  productName?: string;
  /** Every colour variable. */
  variables: ThemeColours;
}

const light: ThemeColours = {
  bg: '#f4f6f8',
  panel: '#ffffff',
  text: '#1b1f24',
  muted: '#57606a',
  line: '#d0d7de',
  accent: '#0b5cad',
  'on-accent': '#ffffff',
  'control-bg': '#f6f8fa',
  'field-bg': '#ffffff',
  'field-line': '#8c959f',
  'highlight-bg': '#ddf4ff',
  'highlight-line': '#54aeff',
  'chip-bg': '#eaeef2',
  'bar-bg': '#10243e',
  'bar-text': '#ffffff',
  'bar-current': '#2c4a70',
  good: '#116329',
  'good-bg': '#dafbe1',
  stale: '#7a4a00',
  'stale-bg': '#fff1c2',
  off: '#3d444d',
  'off-bg': '#e6e8eb',
  bad: '#a40e26',
  'bad-bg': '#ffe0e3',
  'lost-bg': '#7d0a1d',
  focus: '#bf5af2',
};

const dark: ThemeColours = {
  bg: '#0d1117',
  panel: '#161b22',
  text: '#e6edf3',
  muted: '#9da7b3',
  line: '#30363d',
  accent: '#58a6ff',
  'on-accent': '#0d1117',
  'control-bg': '#21262d',
  'field-bg': '#0d1117',
  'field-line': '#6e7681',
  'highlight-bg': '#12263f',
  'highlight-line': '#1f6feb',
  'chip-bg': '#262c36',
  'bar-bg': '#010409',
  'bar-text': '#e6edf3',
  'bar-current': '#1f3a5f',
  good: '#56d364',
  'good-bg': '#0f2d1a',
  stale: '#e3b341',
  'stale-bg': '#2e2108',
  off: '#b1bac4',
  'off-bg': '#262c36',
  bad: '#ff7b72',
  'bad-bg': '#3a1216',
  'lost-bg': '#ffa198',
  focus: '#d2a8ff',
};

const highContrast: ThemeColours = {
  bg: '#000000',
  panel: '#000000',
  text: '#ffffff',
  muted: '#e0e0e0',
  line: '#ffffff',
  accent: '#ffff00',
  'on-accent': '#000000',
  'control-bg': '#1a1a1a',
  'field-bg': '#000000',
  'field-line': '#ffffff',
  'highlight-bg': '#002b55',
  'highlight-line': '#ffff00',
  'chip-bg': '#1a1a1a',
  'bar-bg': '#000000',
  'bar-text': '#ffffff',
  'bar-current': '#003a75',
  good: '#7dff7d',
  'good-bg': '#000000',
  stale: '#ffd500',
  'stale-bg': '#000000',
  off: '#e0e0e0',
  'off-bg': '#000000',
  bad: '#ff8c8c',
  'bad-bg': '#000000',
  'lost-bg': '#ff8c8c',
  focus: '#00ffff',
};

/** The built-in themes, in the order the picker lists them. */
export const builtInThemes: readonly Theme[] = [
  { name: 'light', label: 'Light', builtIn: true, colorScheme: 'light', variables: light },
  { name: 'dark', label: 'Dark', builtIn: true, colorScheme: 'dark', variables: dark },
  {
    name: 'high-contrast',
    label: 'High contrast (control room)',
    builtIn: true,
    colorScheme: 'dark',
    variables: highContrast,
  },
];

/** Names no custom theme may take. */
export const builtInThemeNames: readonly string[] = builtInThemes.map((theme) => theme.name);
