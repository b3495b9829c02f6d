import test from 'ava';
import { writePayload } from '../../../drivers/mqtt/write-payload.js';

const now = () => '2026-01-01T00:00:00.000Z';

test('plain: the value as text, a string as it is, big integers with the digits sent', (t) => {
  const plain = { format: 'plain' as const };
  t.is(writePayload(plain, 'M/T', { fullTagId: 'M/T', value: 42.5 }, now), '42.5');
  t.is(writePayload(plain, 'M/T', { fullTagId: 'M/T', value: true }, now), 'true');
  t.is(writePayload(plain, 'M/T', { fullTagId: 'M/T', value: 'a "b"' }, now), 'a "b"');
  t.is(
    writePayload(
      plain,
      'M/T',
      { fullTagId: 'M/T', value: 9007199254740992, numberText: '9007199254740993' },
      now,
    ),
    '9007199254740993',
  );
  t.is(
    writePayload(plain, 'M/T', { fullTagId: 'M/T', value: 1.5, numberText: '1.50' }, now),
    '1.5',
    'only integer digits are taken as sent',
  );
});

test('json: the value nested at valuePath; tagd: a json-per-tag entry', (t) => {
  t.is(
    writePayload(
      { format: 'json', valuePath: '/cmd/a~1b' },
      'M/T',
      { fullTagId: 'M/T', value: 'on' },
      now,
    ),
    '{"cmd":{"a/b":"on"}}',
  );
  t.is(
    writePayload({ format: 'json', valuePath: '' }, 'M/T', { fullTagId: 'M/T', value: 3 }, now),
    '3',
  );
  const entry = JSON.parse(
    writePayload({ format: 'tagd' }, 'M/T', { fullTagId: 'M/T', value: 7 }, now),
  );
  t.deepEqual(entry, {
    fullTagId: 'M/T',
    utcTimestamp: '2026-01-01T00:00:00.000Z',
    quality: 'Good',
    value: 7,
  });
});
