import test from 'ava';
import { maxStringLength, payloadReader } from '../../../drivers/mqtt/payload-reader.js';
import { mqttSubscriptionSchema } from '../../../drivers/mqtt/schema.js';

const reader = (input: Record<string, unknown>, maxBytes = 1000) =>
  payloadReader(mqttSubscriptionSchema.parse({ topic: 't', tag: 'T', ...input }), maxBytes);
const read = (input: Record<string, unknown>, payload: string | Buffer) =>
  reader(input).read(Buffer.isBuffer(payload) ? payload : Buffer.from(payload));

test('plain numbers: decimal text only, big integers exact', (t) => {
  t.like(read({}, '21.5'), { ok: true, quality: 'Good', value: 21.5 });
  t.like(read({}, ' -1e3\n'), { ok: true, value: -1000 });
  t.like(read({}, '-9223372036854775808'), {
    ok: true,
    value: -(2 ** 63),
    valueText: '-9223372036854775808',
  });
  t.is((read({}, '9007199254740991') as { valueText?: string }).valueText, undefined);
  for (const bad of ['', 'abc', '0x10', '1,5', 'NaN', 'Infinity', '1e999', 'true'])
    t.like(read({}, bad), { ok: false, kind: 'valueWrongType' }, bad);
});

test('plain booleans and strings', (t) => {
  for (const [text, value] of [
    ['true', true],
    ['FALSE', false],
    ['1', true],
    ['0', false],
  ] as const)
    t.like(read({ dataType: 'boolean' }, text), { ok: true, value }, text);
  t.like(read({ dataType: 'boolean' }, 'on'), { ok: false, kind: 'valueWrongType' });
  t.like(read({ dataType: 'string' }, ' é x '), { ok: true, value: ' é x ' });
  const long = Buffer.from('x'.repeat(maxStringLength + 1));
  t.like(reader({ dataType: 'string' }, 10_000).read(long), {
    ok: false,
    kind: 'valueWrongType',
  });
  t.like(read({ dataType: 'string' }, Buffer.from([0xc3])), { ok: false, kind: 'payloadNotText' });
});

test('payloads over maxPayloadBytes are refused before parsing', (t) => {
  t.like(reader({}, 4).read(Buffer.from('12345')), { ok: false, kind: 'payloadTooLarge' });
  t.like(reader({}, 5).read(Buffer.from('12345')), { ok: true, value: 12345 });
});

test('json: value, timestamp (ISO or epoch) and quality at their pointers', (t) => {
  const json = { format: 'json', valuePath: '/v', timestampPath: '/t', qualityPath: '/q' };
  t.like(read(json, '{"v": 1, "t": "2026-03-01T10:00:00.250+01:00", "q": "Good"}'), {
    ok: true,
    value: 1,
    quality: 'Good',
    timestampMs: Date.UTC(2026, 2, 1, 9, 0, 0, 250),
  });
  t.like(read(json, '{"v": "2.5", "t": 1767225600000, "q": true}'), {
    value: 2.5,
    timestampMs: 1767225600000,
  });
  t.like(read({ ...json, timestampUnit: 's' }, '{"v": 1, "t": 1767225600.5, "q": 200}'), {
    timestampMs: 1767225600500,
  });
  for (const [q, quality] of [
    ['"uncertain"', 'Stale'],
    ['"STALE"', 'Stale'],
    ['100', 'Stale'],
    ['63', 'Bad'],
    ['false', 'Bad'],
    ['"Unavailable"', 'Unavailable'],
  ] as const)
    t.like(read(json, `{"v": 1, "t": 0, "q": ${q}}`), { ok: true, quality }, q);
  t.is(
    (read(json, '{"v": 1, "t": 0, "q": "Bad"}') as { value?: unknown }).value,
    undefined,
    'a Bad source keeps no value',
  );
  t.like(read(json, '{"t": 0, "q": "Bad"}'), { ok: true, quality: 'Bad' });
  t.like(read(json, '{"t": 0, "q": "Good"}'), { ok: false, kind: 'valueMissing' });
  t.like(read(json, '{"v": null, "t": 0, "q": "Good"}'), { ok: false, kind: 'valueMissing' });
  for (const q of ['"ok"', '256', '1.5', 'null', '{}'])
    t.like(read(json, `{"v": 1, "t": 0, "q": ${q}}`), { ok: false, kind: 'qualityInvalid' }, q);
  for (const time of ['"2026-03-01T10:00:00"', '"2026-03-01"', '-1', '"now"', '1e20', 'true'])
    t.like(
      read(json, `{"v": 1, "t": ${time}, "q": 192}`),
      { ok: false, kind: 'timestampInvalid' },
      time,
    );
  t.like(read(json, '{"v": 1'), { ok: false, kind: 'payloadNotJson' });
  t.like(read({ format: 'json', valuePath: '' }, '42'), { ok: true, value: 42 });
  t.like(
    read({ format: 'json', valuePath: '/v', dataType: 'string' }, '{"v": 12345678901234567890}'),
    {
      value: '12345678901234567890',
    },
  );
  t.like(read({ format: 'json', valuePath: '/v', dataType: 'boolean' }, '{"v": 0}'), {
    value: false,
  });
  t.like(read({ format: 'json', valuePath: '/v', dataType: 'boolean' }, '{"v": [true]}'), {
    ok: false,
    kind: 'valueWrongType',
  });
});

test('format tagd reads a json-per-tag entry', (t) => {
  t.like(
    read(
      { format: 'tagd' },
      '{"fullTagId":"Oven1/T","utcTimestamp":"2026-01-01T00:00:00.000Z","quality":"Good","value":180.5}',
    ),
    { ok: true, quality: 'Good', value: 180.5, timestampMs: Date.UTC(2026, 0, 1) },
  );
  t.like(
    read(
      { format: 'tagd' },
      '{"fullTagId":"Oven1/T","utcTimestamp":"2026-01-01T00:00:00.000Z","quality":"Unavailable"}',
    ),
    { ok: true, quality: 'Unavailable' },
  );
  t.like(
    read(
      { format: 'tagd' },
      '{"fullTagId":"Oven1/T","utcTimestamp":"2026-01-01T00:00:00.000Z","quality":"Stale","value":3}',
    ),
    { ok: true, quality: 'Stale', value: 3 },
  );
});

test('error messages name the path, never the payload', (t) => {
  const result = read(
    { format: 'json', valuePath: '/secret' },
    '{"secret": "hunter2-is-the-password"}',
  );
  t.like(result, { ok: false, kind: 'valueWrongType' });
  t.false(JSON.stringify(result).includes('hunter2'));
  const broken = read({ format: 'json', valuePath: '/v' }, '{"v": hunter2}');
  t.false(JSON.stringify(broken).includes('hunter2'));
});
