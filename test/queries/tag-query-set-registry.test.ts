import test from 'ava';
import {
  ConflictError,
  NotFoundError,
  RequestError,
  TooManyRequestsError,
} from '../../src/errors.js';
import type { TagQueryBinding } from '../../src/queries/tag-query-binding.js';
import { type TagQuerySet, TagQuerySetRegistry } from '../../src/queries/tag-query-set-registry.js';
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

/** Changes of a one-binding set of `local`, committed, as the binding's samples. */
function observe(set: TagQuerySet, current: Sample[], limit?: number) {
  const changes = set.changes(new Map([['Line1/**', current]]), limit);
  changes.commit();
  return { samples: changes.samples[0], truncated: changes.truncated };
}

test('changes reports everything first, then only what changed in value, quality or timestamp', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const a = sample('Line1/A', 1);
  const b = sample('Line1/B', 'x');
  t.deepEqual(observe(set, [a, b]), { samples: [a, b], truncated: false });
  t.deepEqual(observe(set, [a, b]), { samples: [], truncated: false });
  // An equal copy is not a change.
  t.deepEqual(observe(set, [{ ...a }, { ...b }]), { samples: [], truncated: false });

  const valueChange = sample('Line1/A', 2);
  const timestampOnly = sample('Line1/B', 'x', t0 + 1_000);
  t.deepEqual(observe(set, [valueChange, timestampOnly]), {
    samples: [valueChange, timestampOnly],
    truncated: false,
  });
  const qualityOnly: Sample = { ...valueChange, quality: 'Stale', reason: 'NoUpdate' };
  t.deepEqual(observe(set, [qualityOnly, timestampOnly]), {
    samples: [qualityOnly],
    truncated: false,
  });
  const newcomer = sample('Line1/C', true);
  t.deepEqual(observe(set, [qualityOnly, timestampOnly, newcomer]), {
    samples: [newcomer],
    truncated: false,
  });
});

test('changes are remembered only when committed', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const a = sample('Line1/A', 1);
  const first = set.changes(new Map([['Line1/**', [a]]]));
  t.deepEqual(first.samples, [[a]]);
  t.is(first.added, 1);
  t.is(set.entries, 0);
  // Not committed (say, a Logged read of the same poll failed): the next poll answers it again.
  const again = set.changes(new Map([['Line1/**', [a]]]));
  t.deepEqual(again.samples, [[a]]);
  again.commit();
  t.is(set.entries, 1);
  t.deepEqual(set.changes(new Map([['Line1/**', [a]]])).samples, [[]]);
});

test('NaN to NaN is no change; 0 to -0 is', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  observe(set, [sample('Line1/A', Number.NaN), sample('Line1/B', 0)]);
  const negativeZero = sample('Line1/B', -0);
  t.deepEqual(observe(set, [sample('Line1/A', Number.NaN), negativeZero]).samples, [negativeZero]);
});

test('distinct sources are tracked separately: a tag seen through one is new to another', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', [
    { source: 'Line1/*', store: 'Local' },
    { source: 'Line1/A', store: 'Local' },
  ]);
  const a = sample('Line1/A', 1);
  const first = set.changes(new Map([['Line1/*', [a]]]));
  first.commit();
  t.deepEqual(first.samples, [[a], []]);
  const second = set.changes(
    new Map([
      ['Line1/*', [a]],
      ['Line1/A', [a]],
    ]),
  );
  second.commit();
  t.deepEqual(second.samples, [[], [a]]);
  t.is(set.entries, 2);
});

test('bindings repeating a source share one entry per tag, and each answers every change', (t) => {
  const { registry } = setup();
  const bindings: TagQueryBinding[] = [
    { source: 'Line1/**', store: 'Local' },
    { source: 'Line1/**', store: 'Logged', timeRangeStart: 'now-1h', timeRangeStop: 'now' },
    ...Array.from({ length: 998 }, () => ({ source: 'Line1/**', store: 'Local' as const })),
  ];
  const set = registry.create('alice', bindings);
  const samples = ['A', 'B', 'C'].map((name) => sample(`Line1/${name}`, 1));
  const changes = set.changes(new Map([['Line1/**', samples]]));
  changes.commit();
  t.is(changes.count, 999 * 3);
  t.deepEqual(changes.samples[0], samples);
  t.deepEqual(changes.samples[1], [], 'the Logged binding has no Local changes');
  t.deepEqual(changes.samples[999], samples);
  t.is(set.entries, 3, 'not 999 × 3');
});

test('a limit answers the first changed samples, each for all bindings of its source, and leaves the rest', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const samples = ['A', 'B', 'C', 'D', 'E'].map((name) => sample(`Line1/${name}`, 1));
  t.deepEqual(observe(set, samples, 2), { samples: samples.slice(0, 2), truncated: true });
  t.deepEqual(observe(set, samples, 2), { samples: samples.slice(2, 4), truncated: true });
  // Exactly the limit left: not truncated, since nothing more is waiting.
  t.deepEqual(observe(set, samples, 1), { samples: samples.slice(4), truncated: false });
  t.deepEqual(observe(set, samples, 0), { samples: [], truncated: false });
  const changed = sample('Line1/A', 2);
  t.deepEqual(observe(set, [changed, ...samples.slice(1)], 0), {
    samples: [],
    truncated: true,
  });

  // Three bindings of one source: a limit of 7 answers two samples (6 values), never a part.
  const shared = registry.create('alice', [local[0], local[0], local[0]] as TagQueryBinding[]);
  const cut = shared.changes(new Map([['Line1/**', samples]]), 7);
  t.is(cut.count, 6);
  t.true(cut.truncated);
  t.deepEqual(cut.samples, [samples.slice(0, 2), samples.slice(0, 2), samples.slice(0, 2)]);
  cut.commit();
  t.deepEqual(shared.changes(new Map([['Line1/**', samples]])).samples[2], samples.slice(2));
});

test('replacing the bindings forgets what was seen', (t) => {
  const { registry } = setup();
  const set = registry.create('alice', local);
  const a = sample('Line1/A', 1);
  observe(set, [a]);
  const bindings: TagQueryBinding[] = [{ source: 'Line1/**', store: 'Local' }];
  set.replaceBindings(bindings);
  t.is(set.bindings, bindings);
  t.is(set.entries, 0);
  t.deepEqual(observe(set, [a]).samples, [a]);
});

const limits = { maxDeltaEntries: 10, maxDeltaEntriesPerAccount: 6 };

/** Creates a set of `owner` holding `count` entries, admitted and accounted as the API does. */
function fill(registry: TagQuerySetRegistry, owner: string, count: number): TagQuerySet {
  registry.admit(owner, undefined, count, limits);
  const set = registry.create(owner, local);
  const samples = Array.from({ length: count }, (_, i) => sample(`Line1/T${i}`, i));
  set.changes(new Map([['Line1/**', samples]])).commit();
  registry.account(set);
  return set;
}

test('Delta entries are bounded per account: over the share is 429 query-capacity-reached naming the limit', (t) => {
  const { clock, registry } = setup();
  const first = fill(registry, 'alice', 4);
  clock.advance(60_000);
  fill(registry, 'alice', 2);
  t.is(registry.entriesOf('alice'), 6);
  const error = t.throws(() => registry.admit('alice', undefined, 1, limits), {
    instanceOf: TooManyRequestsError,
  });
  t.is(error?.code, 'query-capacity-reached');
  t.is(error?.status, 429);
  t.is(
    error?.message,
    'The query sets of this account would hold 7 Delta entries (one per tag that each ' +
      'distinct Local source of a set matches); an account holds at most 6 (profile ' +
      'queries.maxDeltaEntriesPerAccount). Use fewer or narrower sources, reuse a set by ' +
      'sending its srcSetId, or retry once unused sets expire (10 minutes after their last poll).',
  );
  // The first of alice's sets expires 9 minutes from now.
  t.is(error?.retryAfterSeconds, 9 * 60);
  // A set's own entries are replaced, not added: the first may shrink or grow within the share.
  t.notThrows(() => registry.admit('alice', first, 4, limits));
  t.throws(() => registry.admit('alice', first, 5, limits), { instanceOf: TooManyRequestsError });
  // Other accounts are not affected.
  t.notThrows(() => registry.admit('bob', undefined, 4, limits));
});

test('Delta entries are bounded for all accounts together, without disclosing the others', (t) => {
  const { clock, registry } = setup();
  fill(registry, 'alice', 6);
  clock.advance(2 * 60_000);
  fill(registry, 'bob', 3);
  t.is(registry.entriesOf(), 9);
  const error = t.throws(() => registry.admit('carol', undefined, 2, limits), {
    instanceOf: TooManyRequestsError,
  });
  t.is(error?.code, 'query-capacity-reached');
  t.is(
    error?.message,
    'The query sets of all accounts together hold the most Delta entries the gateway allows ' +
      '(10, profile queries.maxDeltaEntries); this set would need 2. Retry once unused sets ' +
      'expire (10 minutes after their last poll), or use fewer or narrower sources.',
  );
  t.is(error?.retryAfterSeconds, 8 * 60, 'the first set of anyone expires in 8 minutes');
  t.notThrows(() => registry.admit('carol', undefined, 1, limits));
  // Expired sets give their entries back.
  clock.advance(8 * 60_000);
  t.is(registry.entriesOf(), 3);
  t.is(registry.entriesOf('alice'), 0);
  t.notThrows(() => registry.admit('carol', undefined, 6, limits));
});

test('a set alone over the account share is 413 query-too-large: waiting cannot help', (t) => {
  const { registry } = setup();
  const error = t.throws(() => registry.admit('alice', undefined, 7, limits), {
    instanceOf: RequestError,
  });
  t.is(error?.code, 'query-too-large');
  t.is(error?.status, 413);
  t.is(
    error?.message,
    'This query set would hold 7 Delta entries (one per tag that each distinct Local source ' +
      'matches); the query sets of one account hold at most 6 (profile ' +
      'queries.maxDeltaEntriesPerAccount). Use fewer or narrower sources.',
  );
  const global = t.throws(
    () => registry.admit('alice', undefined, 11, { ...limits, maxDeltaEntriesPerAccount: 20 }),
    { instanceOf: RequestError },
  );
  t.regex(global?.message ?? '', /at most 10 \(profile queries\.maxDeltaEntries\)/);
});

test('replacing a set gives its entries back; a set that expired meanwhile is not accounted', (t) => {
  const { clock, registry } = setup();
  const set = fill(registry, 'alice', 5);
  set.replaceBindings(local);
  registry.account(set);
  t.is(registry.entriesOf('alice'), 0);
  set.changes(new Map([['Line1/**', [sample('Line1/A', 1)]]])).commit();
  clock.advance(10 * 60_000);
  registry.account(set);
  t.is(registry.entriesOf(), 0);
});
