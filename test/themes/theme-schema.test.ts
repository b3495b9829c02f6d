import test from 'ava';
import { customThemeBodySchema, themesSchema } from '../../src/themes/theme-schema.js';

const issues = (result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) => (result.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);

test('a custom theme with valid colours and contrast is accepted', (t) => {
  const result = themesSchema.safeParse({
    default: 'plant-blue',
    custom: [
      {
        name: 'plant-blue',
        productName: 'Line 4 HMI',
        variables: { accent: '#004c99', 'bar-bg': 'rgb(0, 40, 80)' },
      },
    ],
  });
  t.deepEqual(issues(result), []);
  t.is(result.data?.custom[0]?.base, 'light');
});

test('unknown variables and non-colour values are refused', (t) => {
  const result = customThemeBodySchema.safeParse({
    variables: { 'font-family': '#000', bg: '#fff; } * { background: url(//x)', text: 'red' },
  });
  const found = issues(result);
  t.true(
    found.some((line) => line.startsWith('variables: ') && line.includes('font-family')),
    found.join('\n'),
  );
  t.true(found.some((line) => line.startsWith('variables.bg: must be an opaque colour')));
  t.true(found.some((line) => line.startsWith('variables.text: must be an opaque colour')));
});

test('low contrast is refused naming the pair', (t) => {
  const result = customThemeBodySchema.safeParse({ variables: { muted: '#aaaaaa' } });
  t.deepEqual(issues(result), [
    'variables.muted: Contrast too low: --muted on --bg: 2.14:1, needs 4.5:1.',
    'variables.muted: Contrast too low: --muted on --panel: 2.32:1, needs 4.5:1.',
  ]);
  // The same colours pass 4.5:1 but not 7:1 on a high-contrast base.
  const strict = customThemeBodySchema.safeParse({
    base: 'high-contrast',
    variables: { muted: '#8a8a8a' },
  });
  t.true(issues(strict).some((line) => line.includes('needs 7:1')));
});

test('built-in names, duplicates and an unknown default are refused', (t) => {
  const result = themesSchema.safeParse({
    default: 'nowhere',
    custom: [{ name: 'dark' }, { name: 'a' }, { name: 'a' }, { name: 'Bad Name' }],
  });
  const found = issues(result);
  t.true(found.includes('custom.0.name: is the name of a built-in theme'), found.join('\n'));
  t.true(found.some((line) => line.startsWith('custom.3.name:')));
});

test('productName is short plain text', (t) => {
  t.true(customThemeBodySchema.safeParse({ productName: 'Acme Line 4' }).success);
  t.false(customThemeBodySchema.safeParse({ productName: '<img src=x onerror=alert(1)>' }).success);
  t.false(customThemeBodySchema.safeParse({ productName: 'x'.repeat(41) }).success);
});
