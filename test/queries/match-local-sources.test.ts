import test from 'ava';
import { RequestError } from '../../src/errors.js';
import { matchLocalSources } from '../../src/queries/match-local-sources.js';
import type { TagQueryBinding } from '../../src/queries/tag-query-binding.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { ManualClock } from '../helpers/manual-clock.js';

const at = new Date(Date.UTC(2026, 0, 1)).toISOString();

function storeWith(count: number): TagStore {
  const store = new TagStore({ clock: new ManualClock() });
  store.write(
    Array.from({ length: count }, (_, i) => ({
      fullTagId: `Line${i % 10}/Tag${i}`,
      utcTimestamp: at,
      quality: 'Good' as const,
      value: i,
    })),
  );
  return store;
}

const local = (source: string): TagQueryBinding => ({ source, store: 'Local' });

test('each distinct source is matched once; values count it once per binding', async (t) => {
  const store = storeWith(100);
  const bindings = [
    local('Line1/*'),
    local('**'),
    local('Line1/*'),
    { source: '**', store: 'Logged', timeRangeStart: 'now-1h', timeRangeStop: 'now' } as const,
    local('Line2/Tag2'),
    local('Line2/Missing'),
  ];
  const match = await matchLocalSources(store, bindings, { maxMatches: 1_000_000 });
  t.deepEqual([...match.bySource.keys()], ['Line1/*', '**', 'Line2/Tag2', 'Line2/Missing']);
  t.deepEqual(
    match.bySource.get('Line1/*')?.map((sample) => sample.fullTagId),
    ['Line1/Tag1', 'Line1/Tag11', 'Line1/Tag21', 'Line1/Tag31', 'Line1/Tag41'].concat([
      'Line1/Tag51',
      'Line1/Tag61',
      'Line1/Tag71',
      'Line1/Tag81',
      'Line1/Tag91',
    ]),
  );
  t.is(match.bySource.get('**')?.length, 100);
  t.deepEqual(match.bySource.get('Line2/Missing'), []);
  // 10 × 2 + 100 + 1: the Logged binding is not matched here.
  t.is(match.values, 121);
  // Two patterns compare 100 tags each; two paths cost a lookup each; plus the values.
  t.is(match.cost, 200 + 2 + 121);
});

test('past maxMatches the match stops with 413 query-too-large naming the limit', async (t) => {
  const store = storeWith(3_000);
  const error = await t.throwsAsync(
    matchLocalSources(store, [local('Nothing/**')], { maxMatches: 2_999 }),
    { instanceOf: RequestError },
  );
  t.is(error?.code, 'query-too-large');
  t.is(error?.status, 413);
  t.is(
    error?.message,
    'The bindings need more than 2,999 tag matches, the most one request may evaluate (profile ' +
      'queries.maxMatchesPerRequest): each distinct pattern is compared with every tag of the ' +
      'store (3,000 now), and each Local binding counts every tag it matches. Use fewer or ' +
      'narrower bindings.',
  );
  await t.notThrowsAsync(matchLocalSources(store, [local('Nothing/**')], { maxMatches: 3_000 }));
  // Matches count once per binding of their source: 3 × 300 + 3,000 compared.
  const three = [local('Line1/**'), local('Line1/**'), local('Line1/**')];
  await t.notThrowsAsync(matchLocalSources(store, three, { maxMatches: 3_900 }));
  await t.throwsAsync(matchLocalSources(store, three, { maxMatches: 3_899 }));
});

test('a large scan gives the event loop a turn every yieldEvery tags', async (t) => {
  const store = storeWith(10_000);
  let turns = 0;
  let done = false;
  const count = () => {
    turns++;
    if (!done) setImmediate(count);
  };
  setImmediate(count);
  const match = matchLocalSources(store, [local('**')], {
    maxMatches: 1_000_000,
    yieldEvery: 1_000,
  });
  const result = await match;
  done = true;
  t.is(result.values, 10_000);
  // Ten turns given away during the scan; without them the callback would run at most once.
  t.true(turns >= 10, `${turns} turns`);
});
