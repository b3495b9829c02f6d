import test from 'ava';
import { pino } from 'pino';
import { CollectionNotFoundError, InvalidTagPathError } from '../../src/errors.js';
import { type CollectionDefinition, Collections } from '../../src/tags/collections.js';
import type { Sample, TagValue } from '../../src/tags/sample.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

const t0 = Date.UTC(2026, 0, 1);

function good(fullTagId: string, value: TagValue = 1): Sample {
  return { fullTagId, utcTimestamp: new Date(t0).toISOString(), quality: 'Good', value };
}

function newStore(): TagStore {
  return new TagStore({ clock: new ManualClock(t0), logger: pino({ level: 'silent' }) });
}

/** A store holding a small plant. */
function plant(): TagStore {
  const store = newStore();
  store.write([
    good('Line1/Motor/Speed'),
    good('Line1/Motor/Temp'),
    good('Line1/Temp'),
    good('Line2/Motor/Speed'),
    good('Line2/Temp'),
  ]);
  return store;
}

/** Collects every onMembersAdded call as [collection, ids]. */
function recordJoins(collections: Collections): [string, string[]][] {
  const joins: [string, string[]][] = [];
  collections.onMembersAdded((name, ids) => joins.push([name, [...ids]]));
  return joins;
}

test('resolves exact paths and patterns against existing tags', (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'exact', members: ['Line1/Temp', 'Line2/Temp'] },
    { name: 'speeds', members: ['*/Motor/Speed'] },
    { name: 'line1', members: ['Line1/**'] },
    { name: 'temps', members: ['**/Temp'] },
    { name: 'mixed', members: ['Line2/Temp', 'Line1/Motor/*'] },
  ]);
  t.deepEqual(collections.names(), ['exact', 'speeds', 'line1', 'temps', 'mixed']);
  t.deepEqual(collections.members('exact'), ['Line1/Temp', 'Line2/Temp']);
  t.deepEqual(collections.members('speeds'), ['Line1/Motor/Speed', 'Line2/Motor/Speed']);
  t.deepEqual(collections.members('line1'), [
    'Line1/Motor/Speed',
    'Line1/Motor/Temp',
    'Line1/Temp',
  ]);
  t.deepEqual(collections.members('temps'), ['Line1/Motor/Temp', 'Line1/Temp', 'Line2/Temp']);
  // Store (insertion) order, not member order.
  t.deepEqual(collections.members('mixed'), [
    'Line1/Motor/Speed',
    'Line1/Motor/Temp',
    'Line2/Temp',
  ]);
});

test('a tag matched by several members appears once', (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'c', members: ['Line1/Temp', '**/Temp', 'Line1/**'] },
  ]);
  t.deepEqual(collections.members('c'), [
    'Line1/Motor/Speed',
    'Line1/Motor/Temp',
    'Line1/Temp',
    'Line2/Temp',
  ]);
});

test('has(), definition() and an empty collection', (t) => {
  const store = plant();
  const definition: CollectionDefinition = { name: 'none', members: ['Line3/**'] };
  const collections = new Collections(store, [definition]);
  t.true(collections.has('none'));
  t.false(collections.has('other'));
  t.is(collections.definition('none'), definition);
  t.deepEqual(collections.members('none'), []);
});

test('members() returns a copy', (t) => {
  const store = plant();
  const collections = new Collections(store, [{ name: 'c', members: ['Line1/Temp'] }]);
  const members = collections.members('c') as string[];
  members.push('Injected');
  t.deepEqual(collections.members('c'), ['Line1/Temp']);
});

test('an unknown exact path is not a member until it is written', async (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'c', members: ['Line1/Temp', 'Line3/Temp'] },
  ]);
  await collections.start();
  const joins = recordJoins(collections);
  t.deepEqual(collections.members('c'), ['Line1/Temp']);
  store.write([good('Line3/Other')]);
  t.deepEqual(collections.members('c'), ['Line1/Temp']);
  store.write([good('Line3/Temp')]);
  t.deepEqual(collections.members('c'), ['Line1/Temp', 'Line3/Temp']);
  t.deepEqual(joins, [['c', ['Line3/Temp']]]);
  await collections.stop();
});

test('a defined (NeverRead) tag is already a member', async (t) => {
  const store = newStore();
  const collections = new Collections(store, [{ name: 'c', members: ['A/**'] }]);
  await collections.start();
  const joins = recordJoins(collections);
  store.define([{ fullTagId: 'A/B' }]);
  t.deepEqual(collections.members('c'), ['A/B']);
  t.deepEqual(joins, [['c', ['A/B']]]);
  // Its first real value is no new join.
  store.write([good('A/B', 5)]);
  t.deepEqual(joins, [['c', ['A/B']]]);
  await collections.stop();
});

test('tags written after start() join and are reported once per collection', async (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'line3', members: ['Line3/**'] },
    { name: 'temps', members: ['**/Temp'] },
    { name: 'unrelated', members: ['Line9/X'] },
  ]);
  await collections.start();
  const joins = recordJoins(collections);
  store.write([good('Line3/Temp'), good('Line3/Motor/Speed'), good('Line1/Temp', 2)]);
  t.deepEqual(joins, [
    ['line3', ['Line3/Temp', 'Line3/Motor/Speed']],
    ['temps', ['Line3/Temp']],
  ]);
  t.deepEqual(collections.members('line3'), ['Line3/Temp', 'Line3/Motor/Speed']);
  t.deepEqual(collections.members('temps'), [
    'Line1/Motor/Temp',
    'Line1/Temp',
    'Line2/Temp',
    'Line3/Temp',
  ]);
  t.deepEqual(collections.members('unrelated'), []);

  // Writing the same tags again is no new join.
  store.write([good('Line3/Temp', 2), good('Line3/Motor/Speed', 2)]);
  t.is(joins.length, 2);
  await collections.stop();
});

test('tags written before start() are not followed yet, then picked up by start()', async (t) => {
  const store = plant();
  const collections = new Collections(store, [{ name: 'line3', members: ['Line3/**'] }]);
  store.write([good('Line3/A')]);
  t.deepEqual(collections.members('line3'), []);
  await collections.start();
  t.deepEqual(collections.members('line3'), ['Line3/A']);
  await collections.stop();
});

test('onMembersAdded unsubscribe works', async (t) => {
  const store = newStore();
  const collections = new Collections(store, [{ name: 'c', members: ['**'] }]);
  await collections.start();
  const joins: string[][] = [];
  const unsubscribe = collections.onMembersAdded((_name, ids) => joins.push([...ids]));
  store.write([good('A')]);
  unsubscribe();
  store.write([good('B')]);
  t.deepEqual(joins, [['A']]);
  t.deepEqual(collections.members('c'), ['A', 'B']);
  await collections.stop();
});

test('members()/definition() of an unknown name throw CollectionNotFoundError', (t) => {
  const collections = new Collections(plant(), [{ name: 'known', members: ['**'] }]);
  const error = t.throws(() => collections.members('unknown'), {
    instanceOf: CollectionNotFoundError,
  });
  t.is(error?.code, 'collection-not-found');
  t.is(error?.status, 404);
  t.is(error?.collection, 'unknown');
  t.is(error?.message, "Collection 'unknown' does not exist.");
  t.throws(() => collections.definition('unknown'), { instanceOf: CollectionNotFoundError });
});

test('put() adds a collection', (t) => {
  const store = plant();
  const collections = new Collections(store, []);
  t.deepEqual(collections.names(), []);
  collections.put({ name: 'c', members: ['Line2/**'] });
  t.deepEqual(collections.names(), ['c']);
  t.deepEqual(collections.members('c'), ['Line2/Motor/Speed', 'Line2/Temp']);
});

test('put() replaces a collection and re-resolves it', async (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'a', members: ['Line1/**'] },
    { name: 'b', members: ['Line2/Temp'] },
  ]);
  await collections.start();
  const replacement: CollectionDefinition = { name: 'a', members: ['**/Speed'] };
  collections.put(replacement);
  t.deepEqual(collections.names(), ['a', 'b']);
  t.is(collections.definition('a'), replacement);
  t.deepEqual(collections.members('a'), ['Line1/Motor/Speed', 'Line2/Motor/Speed']);
  t.deepEqual(collections.members('b'), ['Line2/Temp']);

  // The replacement is followed, the old members are not.
  const joins = recordJoins(collections);
  store.write([good('Line1/New'), good('Line3/Speed')]);
  t.deepEqual(joins, [['a', ['Line3/Speed']]]);
  t.deepEqual(collections.members('a'), ['Line1/Motor/Speed', 'Line2/Motor/Speed', 'Line3/Speed']);
  await collections.stop();
});

test('delete() removes a collection', async (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'a', members: ['**'] },
    { name: 'b', members: ['Line1/Temp'] },
  ]);
  await collections.start();
  const joins = recordJoins(collections);
  t.true(collections.delete('a'));
  t.false(collections.delete('a'));
  t.false(collections.delete('never'));
  t.deepEqual(collections.names(), ['b']);
  t.false(collections.has('a'));
  t.throws(() => collections.members('a'), { instanceOf: CollectionNotFoundError });
  store.write([good('New')]);
  t.deepEqual(joins, []);
  await collections.stop();
});

test('stop() stops following the store', async (t) => {
  const store = plant();
  const collections = new Collections(store, [{ name: 'c', members: ['Line3/**'] }]);
  await collections.start();
  const joins = recordJoins(collections);
  store.write([good('Line3/A')]);
  await collections.stop();
  store.write([good('Line3/B')]);
  t.deepEqual(collections.members('c'), ['Line3/A']);
  t.deepEqual(joins, [['c', ['Line3/A']]]);
});

test('start() and stop() are idempotent', async (t) => {
  const store = newStore();
  const collections = new Collections(store, [{ name: 'c', members: ['**'] }]);
  await collections.stop();
  await collections.start();
  await collections.start();
  const joins = recordJoins(collections);
  store.write([good('A')]);
  // Started twice, still subscribed once: one join report.
  t.deepEqual(joins, [['c', ['A']]]);
  await collections.stop();
  await collections.stop();
  store.write([good('B')]);
  t.deepEqual(collections.members('c'), ['A']);
  // Started again, it catches up and follows again.
  await collections.start();
  t.deepEqual(collections.members('c'), ['A', 'B']);
  store.write([good('C')]);
  t.deepEqual(collections.members('c'), ['A', 'B', 'C']);
  t.deepEqual(joins, [
    ['c', ['A']],
    ['c', ['C']],
  ]);
  await collections.stop();
});

test('an invalid member throws InvalidTagPathError from the constructor', (t) => {
  const store = plant();
  const error = t.throws(
    () =>
      new Collections(store, [
        { name: 'ok', members: ['Line1/**'] },
        { name: 'bad', members: ['Line1/Temp', 'Line1//Temp'] },
      ]),
    { instanceOf: InvalidTagPathError },
  );
  t.is(error?.code, 'invalid-tag-path');
  t.is(error?.status, 400);
  t.is(error?.path, 'Line1//Temp');
});

test('an invalid member throws from put() and leaves the collection as it was', (t) => {
  const store = plant();
  const original: CollectionDefinition = { name: 'c', members: ['Line1/Temp'] };
  const collections = new Collections(store, [original]);
  for (const member of ['Line1/Te mp', 'Line1/B*', '', 'Temperatur°']) {
    t.throws(() => collections.put({ name: 'c', members: [member] }), {
      instanceOf: InvalidTagPathError,
    });
    t.throws(() => collections.put({ name: 'new', members: ['**', member] }), {
      instanceOf: InvalidTagPathError,
    });
  }
  t.deepEqual(collections.names(), ['c']);
  t.is(collections.definition('c'), original);
  t.deepEqual(collections.members('c'), ['Line1/Temp']);
});

test('a throwing onMembersAdded listener stops no other collection', async (t) => {
  const store = newStore();
  const logs = captureLogs();
  const collections = new Collections(
    store,
    [
      { name: 'first', members: ['**'] },
      { name: 'second', members: ['**'] },
    ],
    logs.logger,
  );
  await collections.start();
  const joins: [string, string[]][] = [];
  collections.onMembersAdded((name) => {
    if (name === 'first') throw new Error('listener exploded');
  });
  collections.onMembersAdded((name, ids) => joins.push([name, [...ids]]));
  store.write([good('A')]);
  t.deepEqual(collections.members('first'), ['A']);
  t.deepEqual(collections.members('second'), ['A']);
  t.deepEqual(joins, [
    ['first', ['A']],
    ['second', ['A']],
  ]);
  const logged = logs.lines.find((line) => line.msg === 'collection listener failed');
  t.is((logged?.err as { message?: string } | undefined)?.message, 'listener exploded');
  await collections.stop();
});

test('tags removed from the store leave every collection', async (t) => {
  const store = plant();
  const collections = new Collections(store, [
    { name: 'Line1', members: ['Line1/**'] },
    { name: 'Temps', members: ['**/Temp'] },
  ]);
  await collections.start();
  store.remove(['Line1/Temp', 'Line1/Motor/Speed']);
  t.deepEqual(collections.members('Line1'), ['Line1/Motor/Temp']);
  t.deepEqual(collections.members('Temps'), ['Line1/Motor/Temp', 'Line2/Temp']);
  await collections.stop();
});
