import test from 'ava';
import {
  defaultPreset,
  fromLocalInput,
  maxPens,
  panRange,
  parseTrendQuery,
  planQuery,
  rangePresets,
  resolveRange,
  toLocalInput,
  trendQuery,
  windowStart,
  windowText,
  zoomRange,
} from '../../src/console/web/trend-range.js';

const day = 86_400;

test('short ranges are read raw, long ones aggregated to one window per pixel column or fewer', (t) => {
  t.deepEqual(planQuery(900, 1500), { mode: 'Raw' });
  t.deepEqual(planQuery(3_600, 300), { mode: 'Raw' });
  // 24 hours on 1,500 px: 57.6 s a column, so 1-minute windows (1,440 of them).
  t.deepEqual(planQuery(day, 1500), { mode: 'Aggregated', windowSeconds: 60, window: '1m' });
  // 7 days on a phone (300 px): 2,016 s a column, so 1-hour windows (168).
  t.deepEqual(planQuery(7 * day, 300), { mode: 'Aggregated', windowSeconds: 3_600, window: '1h' });
  // A raw answer too big for one response: the same range aggregated.
  t.deepEqual(planQuery(3_600, 1800, true), { mode: 'Aggregated', windowSeconds: 2, window: '2s' });
  for (const seconds of [4_000, day, 30 * day, 366 * day]) {
    for (const width of [280, 1366, 1900]) {
      const plan = planQuery(seconds, width);
      if (plan.mode !== 'Aggregated') return t.fail(`${seconds} s raw`);
      t.true(seconds / plan.windowSeconds <= width, `${seconds} s on ${width} px`);
      // Not needlessly coarse: at least a third of the columns hold a window.
      t.true(
        seconds / plan.windowSeconds >= width / 3,
        `${seconds} s on ${width} px: ${plan.window}`,
      );
    }
  }
});

test('window texts are what the API takes; windows start on the UTC epoch grid', (t) => {
  t.deepEqual(
    [windowText(15), windowText(120), windowText(7_200), windowText(day)],
    ['15s', '2m', '2h', '1d'],
  );
  t.is(windowStart(1_000_000_123, 60), 1_000_000_080);
});

test('presets follow now; fixed ranges stay put', (t) => {
  const now = Date.UTC(2026, 10, 27, 12);
  const preset = rangePresets.find((p) => p.id === '24h');
  if (!preset) return t.fail();
  t.deepEqual(resolveRange({ kind: 'live', preset }, now), {
    startMs: now - day * 1000,
    stopMs: now,
  });
  t.deepEqual(resolveRange({ kind: 'fixed', fromMs: 1, toMs: 5_000 }, now), {
    startMs: 1,
    stopMs: 5_000,
  });
});

test('zoom keeps the point under the cursor, pan moves by a fraction, both bounded', (t) => {
  t.deepEqual(zoomRange(0, 100_000, 0.5, 0.5), { startMs: 25_000, stopMs: 75_000 });
  t.deepEqual(zoomRange(0, 100_000, 1, 0.5), { startMs: 50_000, stopMs: 100_000 });
  // Never below one second.
  const tiny = zoomRange(0, 2_000, 0.5, 0.01);
  t.is(tiny.stopMs - tiny.startMs, 1_000);
  t.deepEqual(panRange(0, 100_000, -0.5), { startMs: -50_000, stopMs: 50_000 });
});

test('the URL keeps pens and range; unreadable parts fall back', (t) => {
  const live = parseTrendQuery(
    new URLSearchParams('pen=Demo/Line1/Temperature&pen=Demo/Line1/FillLevel&range=24h'),
  );
  t.deepEqual(live.pens, ['Demo/Line1/Temperature', 'Demo/Line1/FillLevel']);
  t.is(live.range.kind === 'live' && live.range.preset.id, '24h');
  t.is(trendQuery(live), 'pen=Demo/Line1/Temperature&pen=Demo/Line1/FillLevel&range=24h');
  const fixed = {
    pens: ['A/b'],
    range: { kind: 'fixed', fromMs: Date.UTC(2026, 0, 1), toMs: Date.UTC(2026, 0, 2) },
  } as const;
  t.deepEqual(
    parseTrendQuery(new URLSearchParams(trendQuery({ ...fixed, pens: [...fixed.pens] }))),
    {
      pens: ['A/b'],
      range: fixed.range,
    },
  );
  t.is(
    trendQuery({ pens: [], range: fixed.range }),
    'from=2026-01-01T00%3A00%3A00.000Z&to=2026-01-02T00%3A00%3A00.000Z',
  );
  // to before from, garbage, unknown preset: the default preset; duplicates and extra pens dropped.
  const many = Array.from({ length: 12 }, (_, i) => `pen=T/${i % 10}`).join('&');
  const odd = parseTrendQuery(
    new URLSearchParams(`${many}&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z&range=9y`),
  );
  t.is(odd.pens.length, maxPens);
  t.deepEqual(odd.range, { kind: 'live', preset: defaultPreset });
});

test('datetime-local values round-trip in the browser zone', (t) => {
  const ms = new Date(2026, 10, 27, 14, 35).getTime();
  t.is(toLocalInput(ms), '2026-11-27T14:35');
  t.is(fromLocalInput('2026-11-27T14:35'), ms);
  t.is(fromLocalInput(''), undefined);
  t.is(fromLocalInput('yesterday'), undefined);
});
