import test from 'ava';
import {
  auditedErrors,
  auditedItems,
  auditedTagIds,
  auditedTextMax,
  shortened,
} from '../../src/tags/write-audit.js';

test('a body as sent: the number of items and the first distinct tag ids that are strings', (t) => {
  t.deepEqual(auditedItems(null), {});
  t.deepEqual(auditedItems({ writes: 'x' }), {});
  t.deepEqual(auditedItems({ writes: [] }), { items: 0 });
  t.deepEqual(auditedItems({ writes: [null, 3, { fullTagId: 7 }, { fullTagId: 'A/b' }] }), {
    items: 4,
    fullTagIds: ['A/b'],
  });
  const writes = Array.from({ length: 30 }, (_, i) => ({ fullTagId: `T/${i % 15}`, value: i }));
  t.deepEqual(auditedItems({ writes }), {
    items: 30,
    fullTagIds: Array.from({ length: 10 }, (_, i) => `T/${i}`),
    moreTags: 5,
  });
});

test('texts are cut to a bound, problems to ten', (t) => {
  t.is(shortened('short'), 'short');
  const long = shortened('x'.repeat(5_000));
  t.is(long.length, auditedTextMax);
  t.true(long.endsWith('…'));
  t.deepEqual(auditedTagIds(['y'.repeat(300)]).fullTagIds?.[0]?.length, auditedTextMax);
  const errors = Array.from({ length: 12 }, (_, i) => ({
    path: `writes[${i}].value`,
    message: 'm'.repeat(1_000),
  }));
  const audited = auditedErrors(errors);
  t.is(audited.errors.length, 10);
  t.is(audited.moreErrors, 2);
  t.is(audited.errors[0]?.message.length, auditedTextMax);
});
