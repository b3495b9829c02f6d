import test from 'ava';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import {
  contrastFailures,
  contrastRatio,
  describeFailure,
  parseColour,
} from '../../src/themes/contrast.js';

test('every built-in theme passes the contrast check (7:1 for high-contrast)', (t) => {
  for (const theme of builtInThemes) {
    const failures = contrastFailures(theme.variables, theme.name === 'high-contrast');
    t.deepEqual(failures.map(describeFailure), [], theme.name);
  }
});

test('the high-contrast theme is held to 7:1, which light and dark do not all reach', (t) => {
  const light = builtInThemes.find((theme) => theme.name === 'light');
  if (!light) return t.fail();
  t.true(contrastFailures(light.variables, true).length > 0);
});

test('contrast ratios match WCAG reference values', (t) => {
  const ratio = (a: string, b: string) => {
    const x = parseColour(a);
    const y = parseColour(b);
    if (!x || !y) throw new Error('unparsed');
    return contrastRatio(x, y);
  };
  t.is(ratio('#000', '#fff'), 21);
  t.is(ratio('#777', '#777'), 1);
  // WebAIM's checker: #767676 on white is 4.54:1, the lightest grey that passes AA.
  t.is(Math.round(ratio('#767676', '#ffffff') * 100) / 100, 4.54);
  t.is(Math.round(ratio('rgb(118, 118, 118)', 'hsl(0, 0%, 100%)') * 100) / 100, 4.54);
});

test('a failing pair is named with its ratio', (t) => {
  const light = builtInThemes[0];
  if (!light) return t.fail();
  const failures = contrastFailures({ ...light.variables, muted: '#aaaaaa' });
  t.deepEqual(failures.map(describeFailure), [
    '--muted on --bg: 2.14:1, needs 4.5:1',
    '--muted on --panel: 2.32:1, needs 4.5:1',
  ]);
});

test('parseColour takes hex, rgb() and hsl() only', (t) => {
  t.deepEqual(parseColour('#0b5cad'), { r: 11, g: 92, b: 173 });
  t.deepEqual(parseColour('#fff'), { r: 255, g: 255, b: 255 });
  t.deepEqual(parseColour('rgb(10 20 30)'), { r: 10, g: 20, b: 30 });
  t.deepEqual(parseColour('rgb(100%, 0%, 0%)'), { r: 255, g: 0, b: 0 });
  const green = parseColour('hsl(120, 100%, 25%)');
  t.deepEqual(green && [green.r, Math.round(green.g), green.b], [0, 128, 0]);
  for (const bad of [
    'red',
    '#12345',
    '#ff000080',
    'rgb(256, 0, 0)',
    'rgba(0, 0, 0, 0.5)',
    'hsl(0, 120%, 50%)',
    '#fff; } body { background: url(x)',
    'url(https://example.com/x.png)',
    'var(--bg)',
    'expression(alert(1))',
  ]) {
    t.is(parseColour(bad), undefined, bad);
  }
});
