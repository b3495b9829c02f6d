/**
 * The Modbus TCP driver against a raw TCP peer that breaks the MBAP rules: a header that is no
 * MBAP header (protocol id not 0), a length beyond 254 or below 2, an answer with a transaction
 * id never sent. A bad header means the stream is out of step: the connection is dropped at
 * once (no waiting for timeouts), counted, and the driver reconnects; a wrong id is dropped as
 * unmatched and its request times out.
 */
import test from 'ava';
import type { TagStore } from '../../../src/tags/tag-store.js';
import { modbusSubject } from '../../helpers/modbus-harness.js';
import {
  type MbapRequest,
  mbapRegistersAnswer,
  startRawModbusPeer,
} from '../../helpers/modbus-raw-peer.js';
import { until } from '../../helpers/until.js';

const sample = (store: TagStore, id: string) => store.get(id);

test.serial('bad MBAP headers drop the connection at once; a wrong id times out', async (t) => {
  // What each connection does with the first request it gets; later requests are answered.
  const misbehaviour: Record<number, (request: MbapRequest) => Uint8Array> = {
    // An HTTP server on the Modbus port: "HTTP/1.1 400…" reads as protocol id 0x5450.
    1: () => new TextEncoder().encode('HTTP/1.1 400 Bad Request\r\n\r\n'),
    2: (request) => mbapRegistersAnswer(request, [42], { length: 300 }),
    3: (request) => mbapRegistersAnswer(request, [42], { length: 1 }),
    4: (request) => mbapRegistersAnswer(request, [42], { id: request.id + 1000 }),
  };
  const peer = await startRawModbusPeer((request) => {
    const first = peer.requests.filter((r) => r.connection === request.connection).length === 1;
    const bad = misbehaviour[request.connection];
    return first && bad ? bad(request) : mbapRegistersAnswer(request, [42]);
  });
  t.teardown(() => peer.close());
  const { driver, store, clock, logs } = modbusSubject({
    transport: { kind: 'tcp', host: '127.0.0.1', port: peer.port },
    timeoutMs: 500,
    reconnectDelayMs: 100,
    maxReconnectDelayMs: 400,
    tags: [{ name: 'A', table: 'holdingRegister', address: 0 }],
  });
  t.teardown(() => driver.stop());
  const counters = () => driver.status().counters ?? {};
  await driver.start();

  // Connections 1–3: each bad header closes the connection without the clock moving.
  for (const [connection, delay, message] of [
    [1, 100, /protocol id 21584, not 0/],
    [2, 200, /length 300, outside 2–254/],
    [3, 400, /length 1, outside 2–254/],
  ] as const) {
    await until(
      () => counters().disconnects === connection && peer.open() === 0,
      `connection ${connection} is dropped`,
    );
    t.is(counters().malformedFrames, connection);
    t.is(counters().timeouts, 0, 'no timeout was needed');
    t.is(driver.status().state, 'Reconnecting');
    t.regex(driver.status().message ?? '', message);
    t.like(sample(store, 'Dev/A'), { quality: 'Unavailable', reason: 'Disconnected' });
    clock.advance(delay);
    await until(() => peer.connections() === connection + 1, 'the driver connects again');
  }
  t.regex(store.require('Dev/A').message ?? '', /out of step/);

  // Connection 4: the answer carries an id that was never sent: dropped, and A times out.
  await until(() => counters().unmatchedAnswers === 1, 'the wrong id arrives');
  t.is(driver.status().state, 'Running');
  t.is(peer.open(), 1, 'a wrong id is no reason to drop the connection');
  clock.advance(500);
  await until(() => sample(store, 'Dev/A')?.quality === 'Bad', 'A timed out');
  t.is(store.require('Dev/A').reason, 'Timeout');
  // The next poll is answered properly.
  clock.advance(500);
  await until(() => sample(store, 'Dev/A')?.quality === 'Good', 'A is Good');
  t.is(store.require('Dev/A').value, 42);
  t.like(counters(), {
    disconnects: 3,
    malformedFrames: 3,
    unmatchedAnswers: 1,
    timeouts: 1,
    malformed: 0,
  });
  t.is(peer.connections(), 4);
  t.false(
    logs.lines.some((line) => line.level >= 50),
    'nothing is logged as an error',
  );
});
