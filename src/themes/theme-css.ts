/**
 * The stylesheet `/theme.css`: every theme's colours as CSS custom properties, for the console
 * and for the extension apps, so they all share the plant's theme.
 *
 * - `:root` holds the default theme: the profile's `themes.default`, or else light with a
 *   `@media (prefers-color-scheme: dark)` block holding dark, so a page follows the browser.
 * - `[data-theme="NAME"]` blocks hold every theme: a page sets `data-theme` on `<html>` to the
 *   account's choice. They come after `:root` and have the same specificity, so they win.
 *
 * Values come from validated themes only (names by pattern, colours by
 * src/themes/contrast.ts's syntaxes), so nothing here can break out of a declaration.
 */
import { createHash } from 'node:crypto';
import type { Theme } from './built-in-themes.js';
import { themeVariables } from './theme-variables.js';

/** The stylesheet and its validator. */
export interface ThemeStylesheet {
  css: string;
  /** Strong ETag of `css` (quoted). */
  etag: string;
}

function block(selector: string, theme: Theme, indent = ''): string {
  const lines = themeVariables.map((name) => `${indent}  --${name}: ${theme.variables[name]};`);
  return `${indent}${selector} {\n${indent}  color-scheme: ${theme.colorScheme};\n${lines.join('\n')}\n${indent}}\n`;
}

/**
 * Builds `/theme.css`.
 * @param themes every theme (built-in first; src/themes/theme-catalog.ts).
 * @param defaultName the plant default (`themes.default`), or undefined to follow the browser.
 */
export function themeStylesheet(themes: readonly Theme[], defaultName?: string): ThemeStylesheet {
  const byName = (name: string) => themes.find((theme) => theme.name === name);
  const chosen = defaultName === undefined ? undefined : byName(defaultName);
  const light = byName('light');
  const dark = byName('dark');
  const parts = ['/* tagd themes (docs/console.md, "Themes"): generated, do not edit. */\n'];
  if (chosen) {
    parts.push(block(':root', chosen));
  } else if (light && dark) {
    parts.push(block(':root', light));
    parts.push(`@media (prefers-color-scheme: dark) {\n${block(':root', dark, '  ')}}\n`);
  }
  for (const theme of themes) parts.push(block(`[data-theme="${theme.name}"]`, theme));
  const css = parts.join('\n');
  const etag = `"${createHash('sha256').update(css).digest('base64url').slice(0, 27)}"`;
  return { css, etag };
}
