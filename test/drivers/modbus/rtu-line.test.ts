/**
 * RTU line discipline over a real socat pty pair, against a scripted device that answers when
 * the test says: an answer arriving after its timeout is discarded (RTU answers carry no id, so
 * it would fit the next request), the next request waits for the line to be quiet, and frames
 * with a wrong CRC are counted as malformed.
 */
import test from 'ava';
import { rtuSilentInterval } from '../../../drivers/modbus/modbus-driver.js';
import type { TagStore } from '../../../src/tags/tag-store.js';
import { modbusSubject } from '../../helpers/modbus-harness.js';
import { PtyPair, socatMissing } from '../../helpers/modbus-peer.js';
import { registersAnswer, ScriptedRtuDevice } from '../../helpers/modbus-rtu-device.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';

const missing = socatMissing();
if (missing !== undefined) console.warn(`RTU line tests skipped: ${missing}`);
const ptyTest = missing === undefined ? test.serial : test.serial.skip;
const quality = (store: TagStore, id: string) => store.get(id)?.quality;
/** Real time that lets a wrongly sent request reach the device before we check it did not. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

ptyTest(
  'a late answer is discarded and the next request waits until the line is quiet',
  async (t) => {
    const dir = await tempDir(t);
    const pair = await PtyPair.open(dir);
    t.teardown(() => pair.close());
    const device = await ScriptedRtuDevice.open(pair.device);
    t.teardown(() => device.close());
    const { driver, store, clock } = modbusSubject({
      transport: { kind: 'rtu', path: pair.host, turnaroundMs: 50 },
      timeoutMs: 500,
      timeoutsBeforeReconnect: 10,
      // Two requests per poll: A (register 0), then B (register 100).
      tags: [
        { name: 'A', table: 'holdingRegister', address: 0 },
        { name: 'B', table: 'holdingRegister', address: 100 },
      ],
    });
    t.teardown(() => driver.stop());
    const counters = () => driver.status().counters ?? {};
    await driver.start();
    await until(() => device.requests.length === 1, 'A is requested');
    t.like(device.requests[0], { unit: 1, functionCode: 3, address: 0, count: 1 });

    // A times out; its answer comes late, with the function code and byte count B expects.
    clock.advance(500);
    await until(() => counters().timeouts === 1, 'A timed out');
    await device.send(registersAnswer(1, 3, [111]));
    await until(
      () => counters().unmatchedAnswers === 1 || quality(store, 'Dev/B') === 'Good',
      'the late answer is received',
    );
    t.not(quality(store, 'Dev/B'), 'Good', 'the late answer is not taken for B’s');
    await settle();
    t.is(device.requests.length, 1, 'B waits while the line is not quiet');

    // More bytes 30 ms into the silent interval start it again.
    clock.advance(30);
    await device.send(registersAnswer(1, 3, [112]));
    await until(() => counters().unmatchedAnswers === 2, 'the second late answer is received');
    clock.advance(49);
    await settle();
    t.is(device.requests.length, 1, 'the silent interval restarted with the late bytes');
    clock.advance(1);
    await until(() => device.requests.length === 2, 'B is requested once the line is quiet');
    t.like(device.requests[1], { address: 100 });
    await device.send(registersAnswer(1, 3, [222]));
    await until(() => quality(store, 'Dev/B') === 'Good', 'B is read');
    t.is(store.require('Dev/B').value, 222);
    t.like(store.require('Dev/A'), { quality: 'Bad', reason: 'Timeout' });

    // Next poll (t = 1000): A's answer has a wrong CRC, so it is dropped and A times out.
    clock.advance(1000 - 580);
    await until(() => device.requests.length === 3, 'A is requested again');
    await device.send(registersAnswer(1, 3, [333], true));
    await until(() => counters().malformedFrames === 1, 'the bad frame is counted');
    clock.advance(500);
    await until(() => counters().timeouts === 2, 'A timed out again');
    clock.advance(50);
    await until(() => device.requests.length === 4, 'B is requested after the silent interval');
    await device.send(registersAnswer(1, 3, [444]));
    await until(() => store.require('Dev/B').value === 444, 'B is read again');

    // Next poll (t = 2000): both answered in time, B follows A without any wait.
    clock.advance(2000 - 1550);
    await until(() => device.requests.length === 5, 'A is requested a third time');
    await device.send(registersAnswer(1, 3, [555]));
    await until(() => device.requests.length === 6, 'B follows at once');
    await device.send(registersAnswer(1, 3, [666]));
    await until(() => quality(store, 'Dev/A') === 'Good', 'A is Good again');
    t.is(store.require('Dev/A').value, 555);
    t.is(store.require('Dev/B').value, 666);
    t.like(counters(), { timeouts: 2, malformedFrames: 1, unmatchedAnswers: 2, malformed: 0 });
    t.is(driver.status().state, 'Running');
  },
);

test('the RTU silent interval is 3.5 characters, and 1.75 ms above 19200 baud', (t) => {
  // 8N1: 10 bits a character; 8E1: 11.
  t.is(
    rtuSilentInterval({ baudRate: 9600, parity: 'none', dataBits: 8, stopBits: 1 }),
    (3.5 * 10 * 1000) / 9600,
  );
  t.is(
    rtuSilentInterval({ baudRate: 1200, parity: 'even', dataBits: 8, stopBits: 1 }),
    (3.5 * 11 * 1000) / 1200,
  );
  t.is(rtuSilentInterval({ baudRate: 115_200, parity: 'none', dataBits: 8, stopBits: 1 }), 1.75);
});

test('a line that never goes quiet fails the waiting requests as timeouts', async (t) => {
  const written: Uint8Array[] = [];
  let data: ((chunk: Uint8Array) => void) | undefined;
  const { driver, store, clock } = modbusSubject(
    {
      transport: { kind: 'rtu', path: '/dev/fake', turnaroundMs: 50 },
      timeoutMs: 500,
      pollIntervalMs: 60_000,
      timeoutsBeforeReconnect: 10,
      tags: [
        { name: 'A', table: 'holdingRegister', address: 0 },
        { name: 'B', table: 'holdingRegister', address: 100 },
      ],
    },
    {
      // An in-process line: what the driver writes is kept, chatter is fed in by hand.
      opener: async (handlers) => {
        data = handlers.data;
        return { write: (bytes) => void written.push(bytes), close: async () => {} };
      },
    },
  );
  t.teardown(() => driver.stop());
  const counters = () => driver.status().counters ?? {};
  await driver.start();
  await until(() => written.length === 1, 'A is sent');
  clock.advance(500);
  await until(() => counters().timeouts === 1, 'A timed out');
  // A byte every 40 ms: never 50 ms of silence. After 500 ms of it, B is given up on.
  for (let elapsed = 40; elapsed < 500; elapsed += 40) {
    clock.advance(40);
    data?.(Uint8Array.of(0));
  }
  await new Promise((resolve) => setImmediate(resolve));
  t.is(counters().timeouts, 1, 'B still waits after 480 ms of chatter');
  clock.advance(40);
  data?.(Uint8Array.of(0));
  await until(() => counters().timeouts === 2, 'B is given up on');
  await until(() => store.require('Dev/B').quality === 'Bad', 'the poll is written');
  t.like(store.require('Dev/B'), {
    reason: 'Timeout',
    message: 'The line did not go quiet within 500 ms',
  });
  t.is(written.length, 1, 'B was never sent');
  t.is(driver.status().state, 'Running');
});
