/**
 * The open-on-use wrapper: opens its backend on the first call, retries a failed open on the
 * next, and once stopped refuses calls instead of opening the backend again.
 */
import test from 'ava';
import type { HistoryBackend, LoggedSample } from '../../src/history/history-backend.js';
import { HistoryStoppedError, OpenOnUseBackend } from '../../src/history/open-on-use-backend.js';

/** A backend that only counts its opens, closes and appends; `failOpen` refuses the next open. */
class CountingBackend implements HistoryBackend {
  starts = 0;
  stops = 0;
  appended = 0;
  failOpen = false;
  async start() {
    this.starts++;
    if (this.failOpen) {
      this.failOpen = false;
      throw Object.assign(new Error('connection refused'), { unreachable: true });
    }
  }
  async stop() {
    this.stops++;
  }
  async append(samples: readonly LoggedSample[]) {
    this.appended += samples.length;
  }
  raw = async () => [];
  aggregate = async () => [];
  count = async () => 0;
  tagIds = async () => [];
  lastSeq = async () => '0';
  deleteBefore = async () => 0;
}

const sample: LoggedSample = { fullTagId: 'A/b', epochMs: 0, quality: 'Good', value: 1 };

test('opens on first use and retries a failed open on the next call', async (t) => {
  const inner = new CountingBackend();
  const backend = new OpenOnUseBackend(inner);
  inner.failOpen = true;
  await t.throwsAsync(backend.append([sample]), { message: /connection refused/ });
  t.false(backend.isOpen);
  await backend.append([sample]);
  t.true(backend.isOpen);
  t.is(inner.starts, 2);
  t.is(inner.appended, 1);
  await backend.stop();
  t.is(inner.stops, 1);
});

test('after stop, calls reject with a clear error and never open the backend again', async (t) => {
  const inner = new CountingBackend();
  const backend = new OpenOnUseBackend(inner);
  await backend.start();
  await backend.stop();
  const error = await t.throwsAsync(backend.append([sample]), {
    instanceOf: HistoryStoppedError,
  });
  t.regex(error?.message ?? '', /history is stopped \(append\)/);
  await t.throwsAsync(backend.lastSeq(), { instanceOf: HistoryStoppedError });
  await t.throwsAsync(backend.deleteBefore(0), { instanceOf: HistoryStoppedError });
  await t.throwsAsync(backend.raw({ tagIds: ['A/b'], startMs: 0, stopMs: 1, limit: 1 }), {
    instanceOf: HistoryStoppedError,
  });
  t.is(inner.starts, 1, 'not reopened');
  t.is(inner.stops, 1);
  t.is(inner.appended, 0);
  t.false(backend.isOpen);
  await backend.stop();
  t.is(inner.stops, 1, 'stop is idempotent');
  // An explicit start opens it again.
  await backend.start();
  await backend.append([sample]);
  t.is(inner.starts, 2);
  t.is(inner.appended, 1);
  await backend.stop();
});

test('a backend stopped before it ever opened refuses calls too, and a call waiting for an open under way when stop comes is refused', async (t) => {
  const never = new CountingBackend();
  const closed = new OpenOnUseBackend(never);
  await closed.stop();
  await t.throwsAsync(closed.count({ tagIds: [], startMs: 0, stopMs: 1 }), {
    instanceOf: HistoryStoppedError,
  });
  t.is(never.starts, 0);

  const inner = new CountingBackend();
  let finishOpen: () => void = () => undefined;
  inner.start = () => {
    inner.starts++;
    return new Promise<void>((resolve) => {
      finishOpen = resolve;
    });
  };
  const backend = new OpenOnUseBackend(inner);
  const call = backend.append([sample]);
  const stopping = backend.stop();
  finishOpen();
  await t.throwsAsync(call, { instanceOf: HistoryStoppedError });
  await stopping;
  t.is(inner.appended, 0);
  t.is(inner.stops, 1, 'the open that finished is closed');
});
