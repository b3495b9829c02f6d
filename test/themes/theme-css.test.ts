import test from 'ava';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { allThemes } from '../../src/themes/theme-catalog.js';
import { themeStylesheet } from '../../src/themes/theme-css.js';
import { themeVariables } from '../../src/themes/theme-variables.js';

test('without a plant default, :root is light and follows the browser into dark', (t) => {
  const { css } = themeStylesheet(builtInThemes);
  const root = css.indexOf(':root {');
  const media = css.indexOf('@media (prefers-color-scheme: dark) {');
  t.true(root >= 0 && media > root);
  t.regex(css.slice(root, media), /--bg: #f4f6f8;/);
  t.regex(css.slice(media), /^@media[^}]*:root \{\n {4}color-scheme: dark;\n {4}--bg: #0d1117;/);
  for (const theme of builtInThemes) {
    t.true(css.includes(`[data-theme="${theme.name}"] {`), theme.name);
  }
  // Every variable in every block.
  for (const name of themeVariables) {
    t.is(css.split(`--${name}:`).length - 1, 2 + builtInThemes.length, name);
  }
});

test('a plant default replaces the browser rule', (t) => {
  const themes = allThemes([{ name: 'plant', base: 'dark', variables: { accent: '#79c0ff' } }]);
  const { css } = themeStylesheet(themes, 'plant');
  t.false(css.includes('@media'));
  t.regex(css, /^:root \{\n {2}color-scheme: dark;[^}]*--accent: #79c0ff;/m);
  t.true(css.includes('[data-theme="plant"] {'));
  // The custom theme keeps its base's other colours.
  t.regex(css.slice(css.indexOf('[data-theme="plant"]')), /--bg: #0d1117;/);
});

test('the ETag changes with the content and only then', (t) => {
  const a = themeStylesheet(builtInThemes);
  const b = themeStylesheet(builtInThemes);
  const c = themeStylesheet(builtInThemes, 'dark');
  t.is(a.etag, b.etag);
  t.not(a.etag, c.etag);
  t.regex(a.etag, /^"[A-Za-z0-9_-]+"$/);
});
