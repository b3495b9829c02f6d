/**
 * The SLCAN transport against a real SLCAN peer (test/helpers/slcan-peer.py, frames encoded by
 * Debian's python3-can), over TCP and over a pseudo-terminal opened with the serialport package.
 */
import { createServer, type Server, type Socket } from 'node:net';
import test from 'ava';
import { pino } from 'pino';
import type { CanFrame } from '../../../../drivers/can/frame.js';
import { parseSocketUrl, SlcanTransport } from '../../../../drivers/can/transports/slcan.js';
import {
  CanTransportError,
  type TransportEnd,
  type TransportHandlers,
} from '../../../../drivers/can/transports/transport.js';
import { systemClock } from '../../../../src/clock.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { pythonCanMissing, pythonCanReceive, SlcanPeer } from '../../../helpers/slcan-peer.js';

const missing = pythonCanMissing();
const peerTest = missing === undefined ? test.serial : test.serial.skip;
if (missing !== undefined) console.warn(`SLCAN tests skipped: ${missing}`);

const silent = pino({ level: 'silent' });

/** Collects what a transport hands over. */
class Sink implements TransportHandlers {
  frames: CanFrame[] = [];
  batches = 0;
  malformed = 0;
  ends: TransportEnd[] = [];
  private waiters: (() => void)[] = [];

  onFrames(frames: CanFrame[]): void {
    this.frames.push(...frames);
    this.batches++;
    this.wake();
  }
  onEnd(end: TransportEnd): void {
    this.ends.push(end);
    this.wake();
  }
  onMalformed(count: number): void {
    this.malformed += count;
    this.wake();
  }

  /** Resolves once `ready()` holds, checked after every callback. */
  async until(ready: () => boolean, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the transport');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

function transport(port: string, options: { timestamps?: boolean; bitrate?: number } = {}) {
  return new SlcanTransport({
    port,
    bitrate: options.bitrate ?? 500_000,
    timestamps: options.timestamps ?? false,
    clock: systemClock,
    logger: silent,
  });
}

const hex = (frame: CanFrame) => Buffer.from(frame.data.subarray(0, frame.length)).toString('hex');

test('parseSocketUrl tells TCP settings from serial device paths', (t) => {
  t.deepEqual(parseSocketUrl('socket://127.0.0.1:3333'), { host: '127.0.0.1', port: 3333 });
  t.deepEqual(parseSocketUrl('socket://can-gw.local:20108/'), {
    host: 'can-gw.local',
    port: 20108,
  });
  t.deepEqual(parseSocketUrl('socket://[::1]:3333'), { host: '::1', port: 3333 });
  t.is(parseSocketUrl('/dev/ttyACM0'), undefined);
  t.is(parseSocketUrl('socket://host'), undefined);
  t.is(parseSocketUrl('socket://host:70000'), undefined);
});

peerTest('opening sends C, the bitrate, then O, each answered before the next', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  const slcan = transport(peer.address, { bitrate: 250_000 });
  await slcan.open(new Sink());
  await peer.command('O');
  t.deepEqual(peer.commands, ['C', 'S5', 'O']);
  t.true(peer.events.every((event) => event.answer !== 'error'));
  await slcan.close();
  // Closing the channel stops the adapter from acknowledging frames on our behalf.
  await peer.commandCount('C', 2);
  t.deepEqual(peer.commands, ['C', 'S5', 'O', 'C']);
  await peer.seen((event) => event.event === 'disconnected');
});

peerTest('the driver sends the commands python-can’s slcan interface sends', async (t) => {
  const reference = await SlcanPeer.start();
  t.teardown(() => reference.kill());
  const python = pythonCanReceive(reference.address, 1);
  await reference.command('O');
  await reference.send([{ id: 0x100, data: '01' }]);
  t.deepEqual(await python.received, [
    { id: 0x100, extended: false, remote: false, dlc: 1, data: '01' },
  ]);
  const ours = await SlcanPeer.start();
  t.teardown(() => ours.kill());
  const slcan = transport(ours.address);
  await slcan.open(new Sink());
  await slcan.close();
  await ours.commandCount('C', 2);
  // python-can opens twice (set_bitrate reopens, then open()); the sequence is the same.
  const distinct = (commands: string[]) => commands.filter((c, i) => commands[i - 1] !== c);
  t.deepEqual(distinct(reference.commands), ['C', 'S6', 'O', 'C']);
  t.deepEqual(distinct(ours.commands), ['C', 'S6', 'O', 'C']);
});

peerTest(
  'frames encoded by python-can arrive decoded: standard, extended, remote, empty',
  async (t) => {
    const peer = await SlcanPeer.start();
    t.teardown(() => peer.kill());
    const slcan = transport(peer.address);
    t.teardown(() => slcan.close());
    const sink = new Sink();
    await slcan.open(sink);
    const before = Date.now();
    const lines = await peer.send([
      { id: 0x100, data: '7517643201000000' },
      { id: 0x18ff50e5, extended: true, data: '780F0AFEA0020000' },
      { id: 0x7ff, data: '' },
      { id: 0x123, remote: true, dlc: 4 },
      { id: 0x0, extended: true, data: 'FF' },
    ]);
    t.deepEqual(lines, [
      't10087517643201000000',
      'T18FF50E58780F0AFEA0020000',
      't7FF0',
      'r1234',
      'T000000001FF',
    ]);
    await sink.until(() => sink.frames.length === 5);
    t.deepEqual(
      sink.frames.map((frame) => [
        frame.id,
        frame.extended,
        frame.length,
        hex(frame),
        frame.remote ?? false,
      ]),
      [
        [0x100, false, 8, '7517643201000000', false],
        [0x18ff50e5, true, 8, '780f0afea0020000', false],
        [0x7ff, false, 0, '', false],
        [0x123, false, 4, '', true],
        [0x0, true, 1, 'ff', false],
      ],
    );
    for (const frame of sink.frames)
      t.true(frame.timestamp >= before && frame.timestamp <= Date.now());
    t.is(sink.malformed, 0);
  },
);

peerTest('lines split across reads are joined; garbage lines are counted, not fatal', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  const slcan = transport(peer.address);
  t.teardown(() => slcan.close());
  const sink = new Sink();
  await slcan.open(sink);
  await peer.raw('t1232AB');
  await new Promise((resolve) => setTimeout(resolve, 50));
  await peer.raw('CD\rhello\rt1001\r');
  await sink.until(() => sink.frames.length === 1 && sink.malformed === 2);
  t.deepEqual(sink.frames.map(hex), ['abcd']);
  await peer.send([{ id: 0x42, data: '42' }]);
  await sink.until(() => sink.frames.length === 2);
  t.is(sink.frames[1]?.id, 0x42);
  t.deepEqual(sink.ends, []);
});

peerTest('with timestamps on, Z1 is sent while closed and frames carry adapter time', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  const clock = new ManualClock(Date.UTC(2026, 0, 1, 12));
  const slcan = new SlcanTransport({
    port: peer.address,
    bitrate: 1_000_000,
    timestamps: true,
    clock,
    logger: silent,
  });
  t.teardown(() => slcan.close());
  const sink = new Sink();
  await slcan.open(sink);
  await peer.command('O');
  t.deepEqual(peer.commands, ['C', 'S8', 'Z1', 'O']);
  const anchor = clock.now();
  t.deepEqual(await peer.send([{ id: 0x10, data: '00' }], 59_990), ['t010100EA56']);
  await sink.until(() => sink.frames.length === 1);
  clock.advance(100);
  // 25 ms on the adapter, across its minute wrap; the host saw them 100 ms later.
  await peer.send([{ id: 0x11, data: '01' }], 15);
  await sink.until(() => sink.frames.length === 2);
  t.deepEqual(
    sink.frames.map((frame) => frame.timestamp - anchor),
    [0, 25],
  );
});

peerTest('an adapter refusing timestamps still opens, with host arrival times', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  await peer.refuse('Z1');
  const slcan = transport(peer.address, { timestamps: true });
  t.teardown(() => slcan.close());
  await slcan.open(new Sink());
  await peer.command('O');
  t.deepEqual(peer.commands, ['C', 'S6', 'Z1', 'O']);
});

peerTest('an adapter refusing the bitrate fails the open with adapter-refused', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  await peer.refuse('S6');
  const slcan = transport(peer.address);
  const error = await t.throwsAsync(slcan.open(new Sink()), { instanceOf: CanTransportError });
  t.is(error?.problem, 'adapter-refused');
  t.is(
    error?.message,
    `slcan ${peer.address}: the adapter refused or did not answer 'S6' (the bitrate 500000 bit/s).`,
  );
  t.true(error?.retryable);
  t.false(peer.commands.includes('O'));
  await peer.seen((event) => event.event === 'disconnected');
});

test.serial('an adapter that never answers times out on the clock', async (t) => {
  let received = '';
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const { port } = server.address() as { port: number };
  const clock = new ManualClock();
  const slcan = new SlcanTransport({
    port: `socket://127.0.0.1:${port}`,
    bitrate: 500_000,
    commandTimeoutMs: 800,
    clock,
    logger: silent,
  });
  const opening = slcan.open(new Sink());
  const receivedText = async (text: string) => {
    while (received !== text) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  // An unanswered C is tolerated (some adapters stay silent when already closed)…
  await receivedText('C\r');
  clock.advance(799);
  t.is(received, 'C\r', 'no command before the timeout');
  clock.advance(1);
  // …an unanswered bitrate is not.
  await receivedText('C\rS6\r');
  clock.advance(800);
  const error = await t.throwsAsync(opening, { instanceOf: CanTransportError });
  t.is(error?.problem, 'adapter-refused');
  t.is(
    error?.message,
    `slcan socket://127.0.0.1:${port}: the adapter refused or did not answer 'S6' (the bitrate 500000 bit/s).`,
  );
  t.is(clock.pendingTimers(), 0);
});

test.serial('nothing listening: the open fails with a connection error', async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  const slcan = transport(`socket://127.0.0.1:${port}`);
  const error = await t.throwsAsync(slcan.open(new Sink()), { instanceOf: CanTransportError });
  t.is(error?.problem, 'connection');
  t.regex(error?.message ?? '', new RegExp(`^slcan socket://127.0.0.1:${port}: .*ECONNREFUSED`));
});

peerTest('a lost adapter ends the transport once with a connection error', async (t) => {
  const peer = await SlcanPeer.start();
  const slcan = transport(peer.address);
  t.teardown(() => slcan.close());
  const sink = new Sink();
  await slcan.open(sink);
  await peer.kill();
  await sink.until(() => sink.ends.length > 0);
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(sink.ends.length, 1);
  const end = sink.ends[0];
  if (end?.kind !== 'lost') return t.fail('a lost end');
  t.true(end.error instanceof CanTransportError);
  t.regex(end.error.message, /the adapter connection was lost/);
});

peerTest('the transport opens again after a dropped connection', async (t) => {
  const peer = await SlcanPeer.start();
  t.teardown(() => peer.kill());
  const slcan = transport(peer.address);
  t.teardown(() => slcan.close());
  const first = new Sink();
  await slcan.open(first);
  await peer.drop();
  await first.until(() => first.ends.length === 1);
  const second = new Sink();
  await slcan.open(second);
  await peer.send([{ id: 0x1, data: '01' }]);
  await second.until(() => second.frames.length === 1);
  await peer.commandCount('O', 2);
  t.is(first.frames.length, 0);
  t.deepEqual(peer.commands, ['C', 'S6', 'O', 'C', 'S6', 'O']);
});

peerTest('over a serial port (a pseudo-terminal) with the serialport package', async (t) => {
  const peer = await SlcanPeer.start('pty');
  t.teardown(() => peer.kill());
  t.regex(peer.address, /^\/dev\/pts\/\d+$/);
  const slcan = transport(peer.address);
  t.teardown(() => slcan.close());
  const sink = new Sink();
  await slcan.open(sink);
  await peer.command('O');
  t.deepEqual(peer.commands, ['C', 'S6', 'O']);
  await peer.send([
    { id: 0x200, data: '0BC1000500200000' },
    { id: 0x18ff50e5, extended: true, data: '780F' },
  ]);
  // Generous waits: a pseudo-terminal's hang-up reaches serialport's poller late on a loaded box.
  await sink.until(() => sink.frames.length === 2, 20_000);
  t.deepEqual(sink.frames.map(hex), ['0bc1000500200000', '780f']);
  await peer.kill();
  // A hung-up line reads 0 bytes forever; drivers/serial-hangup.ts turns that into a loss.
  await sink.until(() => sink.ends.length === 1, 20_000);
  t.is(sink.ends[0]?.kind, 'lost');
});

test.serial('a serial device that does not exist fails with a connection error', async (t) => {
  const slcan = transport('/dev/tagd-no-such-adapter');
  const error = await t.throwsAsync(slcan.open(new Sink()), { instanceOf: CanTransportError });
  t.is(error?.problem, 'connection');
  t.regex(error?.message ?? '', /^slcan \/dev\/tagd-no-such-adapter: .*No such file or directory/);
});
