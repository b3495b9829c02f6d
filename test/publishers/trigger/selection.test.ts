import test from 'ava';
import type { PublisherCounters } from '../../../src/publishers/publisher.js';
import {
  createSelector,
  EverythingSelector,
  OnChangeSelector,
  SnapshotSelector,
} from '../../../src/publishers/trigger/selection.js';
import type { Quality, Sample, TagValue } from '../../../src/tags/sample.js';
import { TagStore } from '../../../src/tags/tag-store.js';
import { ManualClock } from '../../helpers/manual-clock.js';

const t0 = Date.UTC(2026, 0, 1);
let seconds = 0;

function sample(fullTagId: string, value: TagValue | undefined, quality: Quality = 'Good'): Sample {
  const at = new Date(t0 + ++seconds * 1000).toISOString();
  return value === undefined
    ? { fullTagId, utcTimestamp: at, quality }
    : { fullTagId, utcTimestamp: at, quality, value };
}

function newStore(): TagStore {
  return new TagStore({ clock: new ManualClock(t0) });
}

function counters(): PublisherCounters {
  return { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 };
}

const ids = (batch: readonly Sample[]) => batch.map((s) => `${s.fullTagId}=${String(s.value)}`);

test('createSelector picks the class of each Logging mode', (t) => {
  const deps = {
    store: newStore(),
    isMember: () => true,
    counters: counters(),
    everythingBufferSize: 10,
  };
  t.true(createSelector('Snapshot', deps) instanceof SnapshotSelector);
  t.true(createSelector('On Change', deps) instanceof OnChangeSelector);
  t.true(createSelector('Everything', deps) instanceof EverythingSelector);
});

test('Snapshot: every member current sample, in member order, every time', (t) => {
  const store = newStore();
  store.write([sample('A/1', 1), sample('A/2', 2), sample('A/3', 3)]);
  const selector = new SnapshotSelector(store);
  const members = ['A/3', 'A/1', 'A/missing'];
  t.deepEqual(ids(selector.select(members)), ['A/3=3', 'A/1=1']);
  selector.delivered();
  t.deepEqual(ids(selector.select(members)), ['A/3=3', 'A/1=1'], 'unchanged tags again');
  store.write([sample('A/1', 10)]);
  t.deepEqual(ids(selector.select(members)), ['A/3=3', 'A/1=10']);
  t.is(selector.select(members)[1], store.get('A/1'), 'the stored sample itself, no copy');
});

test('On Change: the first batch is every member, then only value or quality changes', (t) => {
  const store = newStore();
  store.write([sample('A/1', 1), sample('A/2', 2), sample('A/3', 3)]);
  const selector = new OnChangeSelector(store);
  const members = ['A/1', 'A/2', 'A/3'];
  t.deepEqual(ids(selector.select(members)), ['A/1=1', 'A/2=2', 'A/3=3']);
  selector.delivered();
  t.deepEqual(selector.select(members), [], 'nothing changed: empty batch (no POST)');
  selector.delivered();

  // A/1 changes three times: coalesced to its latest sample. A/2 is rewritten with the same
  // value and quality (a new timestamp only): not a change. A/3 turns Bad.
  store.write([
    sample('A/1', 5),
    sample('A/2', 2),
    sample('A/1', 6),
    sample('A/3', undefined, 'Bad'),
  ]);
  store.write([sample('A/1', 7)]);
  const batch = selector.select(members);
  t.deepEqual(ids(batch), ['A/1=7', 'A/3=undefined']);
  t.is(batch[1]?.quality, 'Bad');
  selector.delivered();
  t.deepEqual(selector.select(members), []);
});

test('On Change: a value that went away and came back before the publish is no change', (t) => {
  const store = newStore();
  store.write([sample('A/1', 1)]);
  const selector = new OnChangeSelector(store);
  selector.select(['A/1']);
  selector.delivered();
  store.write([sample('A/1', 2)]);
  store.write([sample('A/1', 1)]);
  t.deepEqual(selector.select(['A/1']), []);
  // Same value, other quality: a change.
  store.write([sample('A/1', 1, 'Stale')]);
  t.deepEqual(ids(selector.select(['A/1'])), ['A/1=1']);
});

test('On Change: after a dropped batch the next one still carries what the receiver missed', (t) => {
  const store = newStore();
  store.write([sample('A/1', 1), sample('A/2', 2)]);
  const selector = new OnChangeSelector(store);
  selector.select(['A/1', 'A/2']);
  selector.delivered();
  store.write([sample('A/1', 10)]);
  t.deepEqual(ids(selector.select(['A/1', 'A/2'])), ['A/1=10']);
  selector.dropped();
  store.write([sample('A/2', 20)]);
  t.deepEqual(ids(selector.select(['A/1', 'A/2'])), ['A/1=10', 'A/2=20']);
  selector.delivered();
  t.deepEqual(selector.select(['A/1', 'A/2']), []);
});

test('On Change: a member joining later is sent once; stop() forgets the reference', (t) => {
  const store = newStore();
  store.write([sample('A/1', 1)]);
  const selector = new OnChangeSelector(store);
  selector.select(['A/1']);
  selector.delivered();
  store.write([sample('A/9', 9)]);
  t.deepEqual(ids(selector.select(['A/1', 'A/9'])), ['A/9=9']);
  selector.delivered();
  selector.stop();
  t.deepEqual(ids(selector.select(['A/1', 'A/9'])), ['A/1=1', 'A/9=9']);
});

test('Everything: every update of every member, in order, uncoalesced', (t) => {
  const store = newStore();
  const members = new Set(['A/1', 'A/2']);
  const tally = counters();
  const selector = new EverythingSelector({
    store,
    isMember: (id) => members.has(id),
    counters: tally,
    everythingBufferSize: 100,
  });
  store.write([sample('A/1', 0)]);
  t.deepEqual(selector.select(), [], 'nothing before start()');
  selector.start();
  selector.start(); // idempotent: one subscription
  store.write([sample('A/1', 1), sample('B/1', 100), sample('A/2', 2)]);
  store.write([
    sample('A/1', 1),
    sample('A/1', 3),
    sample('A/2', 'text'),
    sample('A/2', undefined, 'Bad'),
  ]);
  t.is(selector.buffered, 5);
  const batch = selector.select();
  t.deepEqual(ids(batch), ['A/1=1', 'A/2=2', 'A/1=1', 'A/1=3', 'A/2=undefined']);
  t.is(batch[4]?.quality, 'Bad');
  t.deepEqual(selector.select(), [], 'drained');
  t.is(tally.droppedSamples, 0);
  selector.stop();
  store.write([sample('A/1', 4)]);
  t.deepEqual(selector.select(), [], 'stop() unsubscribes');
});

test('Everything: the buffer keeps its bound, drops the oldest and counts every drop', (t) => {
  const store = newStore();
  const tally = counters();
  const selector = new EverythingSelector({
    store,
    isMember: () => true,
    counters: tally,
    everythingBufferSize: 3,
  });
  selector.start();
  for (let n = 1; n <= 8; n++) store.write([sample('A/1', n)]);
  t.is(selector.buffered, 3);
  t.is(tally.droppedSamples, 5);
  t.deepEqual(ids(selector.select()), ['A/1=6', 'A/1=7', 'A/1=8']);
  store.write([sample('A/1', 9)]);
  t.deepEqual(ids(selector.select()), ['A/1=9']);
  t.is(tally.droppedSamples, 5);
});
