import { execFileSync } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import type { CanFrame } from '../../../../drivers/can/frame.js';
import {
  ReplayTransport,
  type ReplayTransportOptions,
} from '../../../../drivers/can/transports/replay.js';
import {
  CanTransportError,
  type TransportEnd,
  type TransportHandlers,
} from '../../../../drivers/can/transports/transport.js';
import { demoCanLog, demoLogFile } from '../../../helpers/demo-can-log.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { tempDir } from '../../../helpers/temp-dir.js';

const silent = pino({ level: 'silent' });
const start = Date.UTC(2026, 0, 1, 8);

/** What the transport handed over: each batch as [clock time, frame ids]. */
class Recorder implements TransportHandlers {
  batches: [number, number[]][] = [];
  frames: CanFrame[] = [];
  ends: TransportEnd[] = [];
  malformed = 0;
  constructor(private readonly clock: ManualClock) {}
  onFrames(frames: CanFrame[]): void {
    this.batches.push([this.clock.now() - start, frames.map((frame) => frame.id)]);
    this.frames.push(...frames.map((frame) => ({ ...frame })));
  }
  onEnd(end: TransportEnd): void {
    this.ends.push(end);
  }
  onMalformed(count: number): void {
    this.malformed += count;
  }
}

async function replay(
  t: import('ava').ExecutionContext,
  lines: string[],
  options: Partial<ReplayTransportOptions> = {},
) {
  const folder = await tempDir(t);
  const file = join(folder, 'bus.log');
  await writeFile(file, `${lines.join('\n')}\n`);
  const clock = new ManualClock(start);
  const transport = new ReplayTransport({ file, clock, logger: silent, ...options });
  t.teardown(() => transport.close());
  const recorder = new Recorder(clock);
  return { clock, transport, recorder, file };
}

/** A log line at `ms` after the log's own start (an arbitrary day in 2015). */
const line = (ms: number, id: number, data = '00', channel = 'can0') =>
  `(${((1_436_509_052_000 + ms) / 1000).toFixed(6)}) ${channel} ${id.toString(16).padStart(3, '0')}#${data}`;

test('frames play at their logged spacing on the injected clock, same-time frames together', async (t) => {
  const { clock, transport, recorder } = await replay(t, [
    line(0, 0x1),
    line(10, 0x2),
    line(10, 0x3),
    line(250, 0x4),
  ]);
  await transport.open(recorder);
  t.deepEqual(recorder.batches, [[0, [0x1]]], 'the first frame plays at once');
  clock.advance(9);
  t.is(recorder.batches.length, 1);
  clock.advance(1);
  t.deepEqual(recorder.batches.at(-1), [10, [0x2, 0x3]]);
  clock.advance(239);
  t.is(recorder.batches.length, 2);
  t.deepEqual(recorder.ends, []);
  clock.advance(1);
  t.deepEqual(recorder.batches.at(-1), [250, [0x4]]);
  t.deepEqual(recorder.ends, [{ kind: 'finished' }], 'without loop the replay finishes');
  t.deepEqual(
    recorder.frames.map((frame) => frame.timestamp - start),
    [0, 10, 10, 250],
    'frames carry the playback time, not the logged time',
  );
  t.is(clock.pendingTimers(), 0);
});

test('a speed factor divides the waits', async (t) => {
  const { clock, transport, recorder } = await replay(
    t,
    [line(0, 0x1), line(100, 0x2), line(1000, 0x3)],
    { speed: 4 },
  );
  await transport.open(recorder);
  clock.advance(1000);
  t.deepEqual(recorder.batches, [
    [0, [0x1]],
    [25, [0x2]],
    [250, [0x3]],
  ]);
});

test('with loop the log starts over one average frame interval after its last frame', async (t) => {
  const { clock, transport, recorder } = await replay(
    t,
    [line(0, 0x1), line(100, 0x2), line(200, 0x3)],
    { loop: true },
  );
  await transport.open(recorder);
  clock.advance(700);
  t.deepEqual(recorder.batches, [
    [0, [0x1]],
    [100, [0x2]],
    [200, [0x3]],
    [300, [0x1]],
    [400, [0x2]],
    [500, [0x3]],
    [600, [0x1]],
    [700, [0x2]],
  ]);
  t.deepEqual(recorder.ends, []);
  await transport.close();
  t.is(clock.pendingTimers(), 0, 'close cancels the wait for the next frame');
  clock.advance(1000);
  t.is(recorder.batches.length, 8, 'nothing plays after close');
});

test('only the frames of the chosen interface play', async (t) => {
  const { clock, transport, recorder } = await replay(
    t,
    [line(0, 0x1, '00', 'can0'), line(5, 0x2, '00', 'can1'), line(10, 0x3, '00', 'can0')],
    { channel: 'can0' },
  );
  await transport.open(recorder);
  clock.advance(100);
  t.deepEqual(recorder.batches, [
    [0, [0x1]],
    [10, [0x3]],
  ]);
});

test('malformed lines are counted and skipped; comments and error frames are not malformed', async (t) => {
  const { clock, transport, recorder } = await replay(t, [
    '# bench recording',
    line(0, 0x1),
    'garbage',
    '(1436509052.010000) can0 20000040#0000000000000000',
    line(20, 0x2, 'XY'),
    line(30, 0x3),
  ]);
  await transport.open(recorder);
  clock.advance(30);
  t.deepEqual(
    recorder.batches.map(([, ids]) => ids),
    [[0x1], [0x3]],
  );
  t.is(recorder.malformed, 2);
});

test('a missing log fails with bad-source, which retrying cannot fix', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'none.log');
  const transport = new ReplayTransport({ file, clock: new ManualClock(), logger: silent });
  const error = await t.throwsAsync(transport.open(new Recorder(new ManualClock())), {
    instanceOf: CanTransportError,
  });
  t.is(error?.problem, 'bad-source');
  t.false(error?.retryable);
  t.is(error?.message, `Cannot read the replay log ${file}: no such file.`);
});

test('a FIFO swapped in for the log between connects is refused at once, not waited on', async (t) => {
  const { transport, recorder, file } = await replay(t, [line(0, 0x100)]);
  await transport.open(recorder);
  await transport.close();
  // The log is replaced by a FIFO nobody writes to: a blocking open would wait for a writer
  // forever (and hold a libuv thread-pool thread), so this test would time out.
  await rename(file, `${file}.old`);
  execFileSync('mkfifo', [file]);
  const error = await t.throwsAsync(transport.open(new Recorder(new ManualClock())), {
    instanceOf: CanTransportError,
  });
  t.is(error?.problem, 'bad-source');
  t.false(error?.retryable);
  t.is(
    error?.message,
    `Cannot read the replay log ${file}: it is not a regular file (a FIFO, socket or device).`,
  );
});

test('a log without frames is refused with what a line should look like', async (t) => {
  const { transport, recorder, file } = await replay(t, ['# nothing here', 'not a frame']);
  const error = await t.throwsAsync(transport.open(recorder), { instanceOf: CanTransportError });
  t.is(error?.problem, 'bad-source');
  t.is(
    error?.message,
    `The replay log ${file} holds no CAN frame (expected candump -L lines like '(1436509052.249713) can0 123#DEADBEEF').`,
  );
});

test('a log larger than the read-ahead streams from the file, in order, and loops by re-reading', async (t) => {
  const count = 30_000;
  const lines: string[] = [];
  for (let i = 0; i < count; i++)
    lines.push(line(i, i % 0x800, (i & 0xff).toString(16).padStart(2, '0')));
  const { clock, transport, recorder } = await replay(t, lines, {
    readAheadFrames: 2000,
    loop: true,
    speed: 10,
  });
  await transport.open(recorder);
  // 3 ms of clock play 30 frames. With no timer pending the transport is waiting for a read
  // of the file (real I/O): let it finish instead of moving the clock.
  const deadline = Date.now() + 30_000;
  while (recorder.frames.length < count + 10 && Date.now() < deadline) {
    if (clock.pendingTimers() > 0) clock.advance(3);
    await new Promise((resolve) => setTimeout(resolve, clock.pendingTimers() > 0 ? 0 : 1));
  }
  t.true(recorder.frames.length >= count + 10, `${recorder.frames.length} frames played`);
  const played = recorder.frames.slice(0, count + 10);
  played.forEach((frame, i) => {
    const logged = i % count;
    if (frame.id !== logged % 0x800 || frame.data[0] !== (logged & 0xff)) {
      t.fail(`frame ${i} is ${frame.id}, expected ${logged % 0x800}`);
    }
  });
  // The second pass starts 1/10 ms (the average interval at speed 10) after the first ends.
  const gap = (played[count]?.timestamp ?? 0) - (played[count - 1]?.timestamp ?? 0);
  t.true(Math.abs(gap - 0.1) < 0.001, `gap ${gap} ms`);
  t.deepEqual(recorder.ends, []);
});

test('the bundled demo log is exactly what test/helpers/demo-can-log.ts generates', async (t) => {
  t.is(await readFile(demoLogFile, 'utf8'), demoCanLog());
});

test('the bundled demo log replays: 615 frames over 10 s, then loops', async (t) => {
  const clock = new ManualClock(start);
  const transport = new ReplayTransport({ file: demoLogFile, loop: true, clock, logger: silent });
  t.teardown(() => transport.close());
  const recorder = new Recorder(clock);
  await transport.open(recorder);
  clock.advance(9990);
  t.is(recorder.frames.length, 615);
  t.is(recorder.malformed, 0);
  // The last frame (logged at 9.987 s) played at 9984 ms; the log averages one frame per
  // 9984 / 614 ms, so the next pass starts at 10000.26 ms: a 10 s loop.
  clock.advance(30);
  const next = 9984 + 9984 / 614;
  t.deepEqual(
    recorder.frames.slice(615).map((frame) => [frame.id, (frame.timestamp - start).toFixed(2)]),
    [
      [0x100, next.toFixed(2)],
      [0x200, (next + 4).toFixed(2)],
      [0x18ff50e5, (next + 8).toFixed(2)],
      [0x300, (next + 10).toFixed(2)],
    ],
  );
});
