import test from 'ava';
import type { Sample } from '../../src/console/web/api-types.js';
import { axisGroups, penColours, penInfo, refusal } from '../../src/console/web/trend-pens.js';
import { builtInThemes } from '../../src/themes/built-in-themes.js';
import { contrastRatio, parseColour } from '../../src/themes/contrast.js';

const sample = (value: Sample['value'], unit?: string): Sample => ({
  fullTagId: 'x',
  utcTimestamp: '2026-11-27T10:00:00Z',
  quality: 'Good',
  value,
  ...(unit ? { metadata: { unit } } : {}),
});

test('every pen colour reads at 3:1 on the panel of every built-in theme', (t) => {
  for (const colour of penColours) {
    for (const theme of builtInThemes) {
      const ratio = contrastRatio(
        parseColour(colour) as never,
        parseColour(theme.variables.panel) as never,
      );
      t.true(ratio >= 3, `${colour} on ${theme.name}: ${ratio.toFixed(2)}:1`);
    }
  }
});

test('one axis per unit, booleans on their own; a fourth unit and text are refused with the reason', (t) => {
  const pens = [
    penInfo('A/temp', sample(60, '°C')),
    penInfo('A/temp2', sample(61, '°C')),
    penInfo('A/level', sample(40, '%')),
    penInfo('A/pump', sample(true)),
  ];
  t.deepEqual(
    axisGroups(pens).map((group) => group.label),
    ['°C', '%', 'On/Off'],
  );
  t.is(refusal(pens, 'A/temp3', sample(1, '°C')), undefined);
  t.is(refusal(pens, 'A/valve', sample(false)), undefined);
  t.regex(
    refusal(pens, 'A/pressure', sample(4, 'bar')) ?? '',
    /at most 3 axes \(°C, %, On\/Off\).*fourth/,
  );
  t.regex(refusal(pens, 'A/state', sample('Running')) ?? '', /holds text/);
  t.regex(refusal(pens, 'A/temp', sample(1, '°C')) ?? '', /already/);
  t.deepEqual(
    axisGroups([penInfo('A/raw', sample(5))]).map((group) => group.label),
    ['(no unit)'],
  );
});
