/**
 * The colour variables of a theme: exactly the CSS custom properties the console's stylesheet
 * (src/console/web/styles.css) takes its colours from, so a theme can recolour every part of
 * it and nothing else. Extension apps (the andon board) read the same names from `/theme.css`.
 */

/** Every theme variable, without the leading `--`, with what the console paints with it. */
export const themeVariableRoles = {
  bg: 'page background',
  panel: 'panels and cards',
  text: 'body text',
  muted: 'secondary text (hints, labels, counts)',
  line: 'borders between parts (decorative)',
  accent: 'links, primary buttons',
  'on-accent': 'text on accent, danger and lost-communication fills',
  'control-bg': 'buttons and hovered rows',
  'field-bg': 'inputs, selects, text areas',
  'field-line': 'input borders',
  'highlight-bg': 'notices and the selected row',
  'highlight-line': 'notice borders',
  'chip-bg': 'chips and row separators',
  'bar-bg': 'the top bar',
  'bar-text': 'top-bar text and links',
  'bar-current': 'the current page in the top bar',
  good: 'good quality and running meaning',
  'good-bg': 'behind good-quality text',
  stale: 'pending or uncertain status',
  'stale-bg': 'behind pending text',
  off: 'off and out-of-service meaning',
  'off-bg': 'behind off text',
  bad: 'bad quality, errors, danger buttons',
  'bad-bg': 'behind bad-status text',
  'lost-bg': 'lost communications fill',
  focus: 'keyboard focus ring',
} as const;

/** A theme variable name, without the leading `--`. */
export type ThemeVariable = keyof typeof themeVariableRoles;

/** Every theme variable name, in the order the stylesheet and `/theme.css` list them. */
export const themeVariables = Object.keys(themeVariableRoles) as ThemeVariable[];

/** A complete set of colours: every variable given. */
export type ThemeColours = Record<ThemeVariable, string>;
