/**
 * The TagWriter's routing with drivers written for the test (the real drivers are tested through
 * the API against their peers): items reach their own driver in order, results come back in
 * request order, a driver's own checks refuse the whole request, a driver that throws never
 * yields Good, a stopped driver's tags are not writable.
 */
import test from 'ava';
import type { Driver, WritableTag, WriteRequest, WriteResult } from '../../drivers/driver.js';
import { ValidationError } from '../../src/errors.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { TagWriter } from '../../src/tags/tag-writer.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

class FakeDriver implements Driver {
  readonly type = 'fake';
  readonly received: WriteRequest[][] = [];
  constructor(
    readonly name: string,
    private readonly ids: string[],
    private readonly behaviour: {
      answer?: (request: WriteRequest) => WriteResult;
      throws?: boolean;
      check?: (request: WriteRequest) => string | undefined;
      /** Overrides of each writable tag (limits, its own value check). */
      tag?: Partial<WritableTag>;
    } = {},
  ) {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  status() {
    return { state: 'Running' as const, since: '', tagCount: this.ids.length };
  }
  writableTags(): WritableTag[] {
    return this.ids.map((id) => ({
      fullTagId: id,
      allowWrites: true,
      check: (value) => (typeof value === 'number' ? undefined : 'must be a number'),
      ...this.behaviour.tag,
    }));
  }
  async checkWrites(requests: readonly WriteRequest[]) {
    return requests.map((request) => this.behaviour.check?.(request));
  }
  async write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    this.received.push([...requests]);
    if (this.behaviour.throws) throw new Error('driver bug');
    return requests.map((request) => this.behaviour.answer?.(request) ?? { status: 'Good' });
  }
}

function setup() {
  const clock = new ManualClock();
  const logs = captureLogs();
  const store = new TagStore({ clock });
  const writer = new TagWriter({
    store,
    audit: logs.logger.child({ component: 'audit' }),
    logger: logs.logger,
    now: () => clock.now(),
  });
  return { writer, store, logs };
}

test('items go to their drivers in order; results come back in request order', async (t) => {
  const { writer } = setup();
  const a = new FakeDriver('A', ['A/x', 'A/y']);
  const b = new FakeDriver('B', ['B/z'], {
    answer: () => ({ status: 'Bad', reason: 'DeviceException', message: 'no' }),
  });
  writer.register(a);
  writer.register(b);
  const results = await writer.write('op', [
    { fullTagId: 'A/y', value: 1 },
    { fullTagId: 'B/z', value: 2 },
    { fullTagId: 'A/x', value: 3 },
  ]);
  t.deepEqual(results, [
    { fullTagId: 'A/y', status: 'Good' },
    { fullTagId: 'B/z', status: 'Bad', reason: 'DeviceException', message: 'no' },
    { fullTagId: 'A/x', status: 'Good' },
  ]);
  t.deepEqual(a.received, [
    [
      { fullTagId: 'A/y', value: 1 },
      { fullTagId: 'A/x', value: 3 },
    ],
  ]);
});

test('a driver’s own check refuses the whole request before any driver writes', async (t) => {
  const { writer } = setup();
  const a = new FakeDriver('A', ['A/x']);
  const b = new FakeDriver('B', ['B/z'], { check: () => 'the value does not fit the node.' });
  writer.register(a);
  writer.register(b);
  const error = await t.throwsAsync(
    writer.write('op', [
      { fullTagId: 'A/x', value: 1 },
      { fullTagId: 'B/z', value: 2 },
    ]),
    { instanceOf: ValidationError },
  );
  t.deepEqual(error?.errors, [
    { path: 'writes[1].value', message: 'Tag B/z: the value does not fit the node.' },
  ]);
  t.deepEqual(a.received, [], 'A wrote nothing either');
});

test('a driver that throws while writing yields Uncertain, never Good, and is logged', async (t) => {
  const { writer, logs } = setup();
  writer.register(new FakeDriver('A', ['A/x'], { throws: true }));
  const results = await writer.write('op', [{ fullTagId: 'A/x', value: 1 }]);
  t.like(results[0], { status: 'Uncertain', reason: 'OutcomeUnknown' });
  t.true(logs.lines.some((line) => line.msg === 'a driver write failed'));
});

test('an unregistered (stopping) driver’s tags are refused as not writable', async (t) => {
  const { writer, store } = setup();
  const a = new FakeDriver('A', ['A/x']);
  store.define([{ fullTagId: 'A/x' }]);
  writer.register(a);
  t.true(writer.isWritable('A/x'));
  writer.unregister(a);
  t.false(writer.isWritable('A/x'));
  const error = await t.throwsAsync(writer.write('op', [{ fullTagId: 'A/x', value: 1 }]), {
    instanceOf: ValidationError,
  });
  t.is(error?.errors[0]?.message, 'Tag A/x is not writable.');
  t.deepEqual(a.received, []);
});

test('writeMin/writeMax hold a 64-bit decimal string exactly, not its nearest double', async (t) => {
  const { writer } = setup();
  const a = new FakeDriver('A', ['A/x'], {
    // The limits a profile can spell: 2^53 and −2^53 are doubles.
    tag: { writeMin: -(2 ** 53), writeMax: 2 ** 53, check: () => undefined },
  });
  writer.register(a);
  // 2^53 + 1 rounds to 2^53, within writeMax: only an exact comparison sees it above.
  for (const [value, message] of [
    ['9007199254740993', 'Tag A/x: 9007199254740993 is above writeMax 9007199254740992.'],
    ['-9007199254740993', 'Tag A/x: -9007199254740993 is below writeMin -9007199254740992.'],
  ] as const) {
    const error = await t.throwsAsync(writer.write('op', [{ fullTagId: 'A/x', value }]), {
      instanceOf: ValidationError,
    });
    t.deepEqual(error?.errors, [{ path: 'writes[0].value', message }]);
  }
  t.deepEqual(a.received, []);
  await writer.write('op', [
    { fullTagId: 'A/x', value: '9007199254740992' },
    { fullTagId: 'A/x', value: '-9007199254740992' },
    { fullTagId: 'A/x', value: 'text' },
  ]);
  t.is(a.received[0]?.length, 3);
});

test('each tag check and driver check sees a number as the client spelt it', async (t) => {
  const { writer } = setup();
  const seen: (string | undefined)[] = [];
  const a = new FakeDriver('A', ['A/x'], {
    tag: {
      check: (_value, numberText) => {
        seen.push(numberText);
        return undefined;
      },
    },
    check: (request) => {
      seen.push(request.numberText);
      return undefined;
    },
  });
  writer.register(a);
  await writer.write('op', [{ fullTagId: 'A/x', value: 2 ** 53, numberText: '9007199254740993' }]);
  t.deepEqual(seen, ['9007199254740993', '9007199254740993']);
});
