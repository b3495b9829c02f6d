import test from 'ava';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import {
  type TagQueryBinding,
  TagQuerySetRegistry,
} from '../../src/queries/tag-query-set-registry.js';
import type { Sample } from '../../src/tags/sample.js';
import { ManualClock } from '../helpers/manual-clock.js';

const local: TagQueryBinding[] = [{ source: 'Line1/**', store: 'Local' }];
const t0 = Date.UTC(2026, 0, 1);

function sample(
  fullTagId: string,
  value: Sample['value'],
  at = t0,
  quality: Sample['quality'] = 'Good',
): Sample {
  return {
    fullTagId,
    utcTimestamp: new Date(at).toISOString(),
    quality,
    ...(value !== undefined ? { value } : {}),
  };
}

function setup(options: { maxSetsPerAccount?: number } = {}) {
  const clock = new ManualClock(t0);
  let next = 0;
  const registry = new TagQuerySetRegistry({
    now: () => clock.now(),
    createId: () => `set-${++next}`,
    ...options,
  });
  return { clock, registry };
}

test('a set belongs to its owner: another account gets the same 404 as for an unknown id', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  t.is(registry.use('alice', set.id), set);
  const foreign = t.throws(() => registry.use('bob', set.id), { instanceOf: NotFoundError });
  const unknown = t.throws(() => registry.use('bob', 'set-99'), { instanceOf: NotFoundError });
  t.is(
    foreign?.message,
    "Query set 'set-1' does not exist or has expired (a set expires 10 minutes after its last poll).",
  );
  t.is(unknown?.message.replace('set-99', 'set-1'), foreign?.message);
  t.is(foreign?.code, 'not-found');
});

test('default ids are random UUIDs, never repeated', (t) => {
  const registry = new TagQuerySetRegistry();
  const ids = new Set(Array.from({ length: 50 }, () => registry.create('alice', local).id));
  t.is(ids.size, 50);
  for (const id of ids)
    t.regex(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
});

test('a set expires 10 minutes after its last use, and each use extends it', (t) => {
  const { clock, registry } = setup();
  const set = registry.create('alice', local);
  clock.advance(9 * 60_000 + 59_999);
  t.is(registry.use('alice', set.id), set);
  clock.advance(9 * 60_000 + 59_999);
  t.is(registry.use('alice', set.id), set);
  clock.advance(10 * 60_000);
  t.throws(() => registry.use('alice', set.id), { instanceOf: NotFoundError });
  t.is(registry.size, 0);
});

test('a set is gone exactly 10 minutes after its last use', (t) => {
  const { clock, registry } = setup();
  const set = registry.create('alice', local);
  clock.advance(10 * 60_000 - 1);
  t.is(registry.size, 1);
  clock.advance(1);
  t.throws(() => registry.use('alice', set.id), { instanceOf: NotFoundError });
  t.is(registry.size, 0);
});

test('an account holds at most the limit of live sets; expired ones stop counting', (t) => {
  const { clock, registry } = setup({ maxSetsPerAccount: 3 });
  for (let i = 0; i < 3; i++) registry.create('alice', local);
  const error = t.throws(() => registry.create('alice', local), { instanceOf: ConflictError });
  t.is(error?.code, 'limit-reached');
  t.is(error?.status, 409);
  t.is(
    error?.message,
    'This account already holds 3 query sets, the most allowed. Reuse one by sending its ' +
      'srcSetId, or let unused ones expire (10 minutes after their last poll).',
  );
  // Other accounts have their own allowance.
  t.notThrows(() => registry.create('bob', local));
  t.is(registry.countOf('alice'), 3);
  clock.advance(10 * 60_000);
  t.is(registry.countOf('alice'), 0);
  t.notThrows(() => registry.create('alice', local));
});

test('the default limit is 100 sets per account', (t) => {
  const { registry } = setup();
  for (let i = 0; i < 100; i++) registry.create('alice', local);
  t.throws(() => registry.create('alice', local), { instanceOf: ConflictError });
});

test('observe reports everything first, then only what changed in value, quality or timestamp', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const a = sample('Line1/A', 1);
  const b = sample('Line1/B', 'x');
  t.deepEqual(set.observe(0, [a, b]), { samples: [a, b], truncated: false });
  t.deepEqual(set.observe(0, [a, b]), { samples: [], truncated: false });
  // An equal copy is not a change.
  t.deepEqual(set.observe(0, [{ ...a }, { ...b }]), { samples: [], truncated: false });

  const valueChange = sample('Line1/A', 2);
  const timestampOnly = sample('Line1/B', 'x', t0 + 1_000);
  t.deepEqual(set.observe(0, [valueChange, timestampOnly]), {
    samples: [valueChange, timestampOnly],
    truncated: false,
  });
  const qualityOnly: Sample = { ...valueChange, quality: 'Stale', reason: 'NoUpdate' };
  t.deepEqual(set.observe(0, [qualityOnly, timestampOnly]), {
    samples: [qualityOnly],
    truncated: false,
  });
  const newcomer = sample('Line1/C', true);
  t.deepEqual(set.observe(0, [qualityOnly, timestampOnly, newcomer]), {
    samples: [newcomer],
    truncated: false,
  });
});

test('NaN to NaN is no change; 0 to -0 is', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  set.observe(0, [sample('Line1/A', Number.NaN), sample('Line1/B', 0)]);
  const negativeZero = sample('Line1/B', -0);
  t.deepEqual(set.observe(0, [sample('Line1/A', Number.NaN), negativeZero]).samples, [
    negativeZero,
  ]);
});

test('bindings are tracked separately: a tag seen through one is new to another', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', [
    { source: 'Line1/*', store: 'Local' },
    { source: 'Line1/A', store: 'Local' },
  ]);
  const a = sample('Line1/A', 1);
  t.deepEqual(set.observe(0, [a]).samples, [a]);
  t.deepEqual(set.observe(1, [a]).samples, [a]);
  t.deepEqual(set.observe(1, [a]).samples, []);
  t.throws(() => set.observe(2, [a]), { instanceOf: RangeError });
});

test('a limit returns the first changed samples and leaves the rest for the next call', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const samples = ['A', 'B', 'C', 'D', 'E'].map((name) => sample(`Line1/${name}`, 1));
  t.deepEqual(set.observe(0, samples, 2), { samples: samples.slice(0, 2), truncated: true });
  t.deepEqual(set.observe(0, samples, 2), { samples: samples.slice(2, 4), truncated: true });
  // Exactly the limit left: not truncated, since nothing more is waiting.
  t.deepEqual(set.observe(0, samples, 1), { samples: samples.slice(4), truncated: false });
  t.deepEqual(set.observe(0, samples, 0), { samples: [], truncated: false });
  const changed = sample('Line1/A', 2);
  t.deepEqual(set.observe(0, [changed, ...samples.slice(1)], 0), {
    samples: [],
    truncated: true,
  });
});

test('replacing the bindings forgets what was seen', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const a = sample('Line1/A', 1);
  set.observe(0, [a]);
  const bindings: TagQueryBinding[] = [{ source: 'Line1/A', store: 'Local' }];
  set.replaceBindings(bindings);
  t.is(set.bindings, bindings);
  t.deepEqual(set.observe(0, [a]).samples, [a]);
});
