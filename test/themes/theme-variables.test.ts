import { readFile } from 'node:fs/promises';
import test from 'ava';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { parseColour } from '../../src/themes/contrast.js';
import { themeVariables } from '../../src/themes/theme-variables.js';

const stylesheet = new URL('../../src/console/web/styles.css', import.meta.url);

test("the theme variables are exactly the console stylesheet's colours, and light is its own", async (t) => {
  const css = await readFile(stylesheet, 'utf8');
  const root = css.slice(css.indexOf(':root {'), css.indexOf('}', css.indexOf(':root {')));
  const declared = [...root.matchAll(/--([a-z-]+):\s*([^;]+);/g)].map(
    ([, name = '', value = '']) => [name, value],
  );
  t.deepEqual(
    declared.map(([name]) => name),
    themeVariables,
  );
  const used = new Set([...css.matchAll(/var\(--([a-z-]+)/g)].map(([, name]) => name));
  // Lengths the console sets at run time (nav-bar.tsx measures the top bar): no colours.
  const layoutVariables = ['top-bar-height'];
  t.deepEqual(
    [...used].filter(
      (name) => !themeVariables.includes(name as never) && !layoutVariables.includes(name ?? ''),
    ),
    [],
  );
  t.deepEqual(
    themeVariables.filter((name) => !used.has(name)),
    [],
    'every variable is used',
  );
  // No colour outside the variables: a theme could not change it.
  const rest = css.replace(root, '');
  t.deepEqual(rest.match(/#[0-9a-f]{3,8}\b|rgba?\(|hsla?\(/gi), null);
  const light = builtInThemes.find((theme) => theme.name === 'light');
  for (const [name = '', value = ''] of declared) {
    t.deepEqual(parseColour(value), parseColour(light?.variables[name as never] ?? ''), name);
  }
});
