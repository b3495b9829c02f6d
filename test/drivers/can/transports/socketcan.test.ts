/**
 * This machine's kernel has no CAN at all, so the real package can only show how it fails; that
 * failure must be told plainly. The frame handling is checked with a stand-in for the native
 * channel (no CAN peer can run here).
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { pino } from 'pino';
import type { CanFrame } from '../../../../drivers/can/frame.js';
import {
  diagnoseOpenFailure,
  type SocketcanChannel,
  type SocketcanMessage,
  type SocketcanModule,
  SocketcanTransport,
} from '../../../../drivers/can/transports/socketcan.js';
import {
  CanTransportError,
  type TransportEnd,
} from '../../../../drivers/can/transports/transport.js';
import { ManualClock } from '../../../helpers/manual-clock.js';
import { tempDir } from '../../../helpers/temp-dir.js';

const silent = pino({ level: 'silent' });
const kernelHasCan = existsSync('/proc/net/can');

test('the socketcan package loads (it is built for this Node)', async (t) => {
  const module = (await import('socketcan')) as unknown as Partial<SocketcanModule> & {
    default?: SocketcanModule;
  };
  const api = module.createRawChannelWithOptions ? module : module.default;
  t.is(typeof api?.createRawChannelWithOptions, 'function');
});

(kernelHasCan ? test.skip : test)(
  'without CAN in the kernel the open fails saying so and naming the interface',
  async (t) => {
    const transport = new SocketcanTransport({
      interface: 'can0',
      clock: new ManualClock(),
      logger: silent,
    });
    const error = await t.throwsAsync(transport.open({ onFrames: () => {}, onEnd: () => {} }), {
      instanceOf: CanTransportError,
    });
    t.is(error?.problem, 'no-kernel-support');
    t.false(error?.retryable, 'retrying cannot add CAN to the kernel');
    t.is(
      error?.message,
      "Cannot open CAN interface 'can0': this Linux kernel has no SocketCAN support " +
        '(/proc/net/can does not exist; the can and can_raw modules are missing or cannot be ' +
        'loaded here, e.g. in a container). Use a kernel with CAN support, or the slcan transport.',
    );
    t.is((error?.cause as Error | undefined)?.message, 'Error while creating channel');
  },
);

/** procfs and sysfs stand-ins: CAN in the kernel, and the given interfaces with link types. */
async function fakeSystem(t: import('ava').ExecutionContext, interfaces: Record<string, number>) {
  const root = await tempDir(t);
  const roots = { proc: join(root, 'proc'), sys: join(root, 'sys') };
  await mkdir(join(roots.proc, 'net/can'), { recursive: true });
  for (const [name, type] of Object.entries(interfaces)) {
    await mkdir(join(roots.sys, 'class/net', name), { recursive: true });
    await writeFile(join(roots.sys, 'class/net', name, 'type'), `${type}\n`);
  }
  return roots;
}

test('with CAN in the kernel, a missing interface is reported as such (and worth retrying)', async (t) => {
  const roots = await fakeSystem(t, { eth0: 1 });
  const error = await diagnoseOpenFailure('can1', new Error('Error while creating channel'), roots);
  t.is(error.problem, 'no-interface');
  t.true(error.retryable, 'a USB adapter may be plugged in later');
  t.is(
    error.message,
    "Cannot open CAN interface 'can1': there is no network interface of that name " +
      '(is the adapter plugged in? `ip link show` lists the interfaces).',
  );
});

test('an interface that is not CAN is reported with its link type', async (t) => {
  const roots = await fakeSystem(t, { eth0: 1 });
  const error = await diagnoseOpenFailure('eth0', new Error('Error while creating channel'), roots);
  t.is(error.problem, 'not-can');
  t.is(
    error.message,
    "Cannot open CAN interface 'eth0': the interface exists but is not a CAN interface " +
      '(link type 1, CAN is 280).',
  );
});

test('a CAN interface that still fails to open points at bringing it up', async (t) => {
  const roots = await fakeSystem(t, { can0: 280 });
  const error = await diagnoseOpenFailure('can0', new Error('Error while creating channel'), roots);
  t.is(error.problem, 'connection');
  t.is(
    error.message,
    "Cannot open CAN interface 'can0': Error while creating channel (is the interface up? " +
      '`ip link set can0 up type can bitrate 500000`).',
  );
});

test('a package that cannot be loaded is module-missing, naming the remedy', async (t) => {
  const transport = new SocketcanTransport({
    interface: 'can0',
    clock: new ManualClock(),
    logger: silent,
    load: () => Promise.reject(new Error('Cannot find module socketcan')),
  });
  const error = await t.throwsAsync(transport.open({ onFrames: () => {}, onEnd: () => {} }), {
    instanceOf: CanTransportError,
  });
  t.is(error?.problem, 'module-missing');
  t.false(error?.retryable);
  t.regex(
    error?.message ?? '',
    /Cannot find module socketcan\. Install it with `npm install socketcan`/,
  );
});

/** A stand-in for socketcan's native RawChannel. */
class FakeChannel implements SocketcanChannel {
  started = false;
  stopped = false;
  private onMessage: ((message: SocketcanMessage) => void) | undefined;
  private onStopped: (() => void) | undefined;
  addListener(
    event: 'onMessage' | 'onStopped',
    callback: (message: SocketcanMessage) => void,
  ): void {
    if (event === 'onMessage') this.onMessage = callback;
    else this.onStopped = callback as () => void;
  }
  start(): void {
    this.started = true;
  }
  stop(): void {
    this.stopped = true;
  }
  deliver(message: SocketcanMessage): void {
    this.onMessage?.(message);
  }
  hangUp(): void {
    this.onStopped?.();
  }
}

async function openFake(t: import('ava').ExecutionContext) {
  const channel = new FakeChannel();
  const opened: string[] = [];
  const transport = new SocketcanTransport({
    interface: 'vcan0',
    clock: new ManualClock(Date.UTC(2026, 0, 1)),
    logger: silent,
    load: async () => ({
      createRawChannelWithOptions: (name, options) => {
        opened.push(`${name} ${JSON.stringify(options)}`);
        return channel;
      },
    }),
  });
  t.teardown(() => transport.close());
  const batches: CanFrame[][] = [];
  const ends: TransportEnd[] = [];
  await transport.open({
    onFrames: (frames) => batches.push(frames),
    onEnd: (end) => ends.push(end),
  });
  return { channel, transport, batches, ends, opened };
}

test('frames of one read are handed over together, with kernel timestamps', async (t) => {
  const { channel, batches, opened } = await openFake(t);
  t.deepEqual(opened, ['vcan0 {"timestamps":true}']);
  t.true(channel.started);
  channel.deliver({
    id: 0x100,
    data: Buffer.from([1, 2]),
    ts_sec: 1_767_225_600,
    ts_usec: 123_456,
  });
  channel.deliver({ id: 0x18ff50e5, ext: true, data: Buffer.alloc(12, 7) });
  channel.deliver({ id: 0x7, rtr: true, data: Buffer.alloc(0) });
  t.is(batches.length, 0, 'not yet: more may come in the same read');
  await new Promise((resolve) => setImmediate(resolve));
  t.is(batches.length, 1);
  t.deepEqual(batches[0], [
    {
      id: 0x100,
      extended: false,
      data: Uint8Array.from([1, 2]),
      length: 2,
      timestamp: 1_767_225_600_123,
    },
    {
      id: 0x18ff50e5,
      extended: true,
      data: new Uint8Array(12).fill(7),
      length: 12,
      timestamp: Date.UTC(2026, 0, 1),
      fd: true,
    },
    {
      id: 0x7,
      extended: false,
      data: new Uint8Array(0),
      length: 0,
      timestamp: Date.UTC(2026, 0, 1),
      remote: true,
    },
  ]);
});

test('a bus-off error frame ends the transport as lost; other error frames do not', async (t) => {
  const { channel, ends, batches } = await openFake(t);
  // CAN_ERR_CRTL (0x04): controller problems such as error-passive, not bus-off.
  channel.deliver({ id: 0x04, err: true, data: Buffer.alloc(8) });
  t.deepEqual(ends, []);
  channel.deliver({ id: 0x40, err: true, data: Buffer.alloc(8) });
  t.is(ends.length, 1);
  const end = ends[0];
  if (end?.kind !== 'lost') return t.fail('lost');
  t.is(end.error.message, "CAN interface 'vcan0' went bus-off.");
  t.true(channel.stopped, 'the channel is released');
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(batches, [], 'error frames are never data');
});

test('an interface that goes away ends the transport as lost, once', async (t) => {
  const { channel, ends } = await openFake(t);
  channel.hangUp();
  channel.hangUp();
  t.is(ends.length, 1);
  t.is(
    ends[0]?.kind === 'lost' ? ends[0].error.message : '',
    "CAN interface 'vcan0' went away or reported an error.",
  );
});
