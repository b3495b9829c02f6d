/**
 * The shared memory budget of the configuration routes' large request bodies: the reservation
 * rules, and a demo daemon refusing a fifth 16 MiB upload while four are being read, then
 * taking bodies again as the uploads end or are abandoned. In a file of its own: the budget is
 * the process's one, and other files' large uploads would share it.
 */
import type { Socket } from 'node:net';
import test from 'ava';
import { configurationBodyBytes } from '../../src/api/json-bodies.js';
import {
  bodyReservationBytes,
  LargeBodyBudget,
  largeBodyBudget,
  largeBodyBudgetBytes,
} from '../../src/api/large-body-budget.js';
import { managedDaemon } from '../helpers/managed-daemon.js';
import { answerTo, closed, openSocket, type RawResponse } from '../helpers/raw-http.js';
import { until } from '../helpers/until.js';

const mebibyte = 1024 * 1024;

test('a body reserves its declared length, or the whole limit when chunked or encoded', (t) => {
  const limit = 16 * mebibyte;
  t.is(bodyReservationBytes({ 'content-length': '1400000' }, limit), 1_400_000);
  t.is(bodyReservationBytes({ 'content-length': String(limit + 1) }, limit), limit);
  t.is(bodyReservationBytes({ 'transfer-encoding': 'chunked' }, limit), limit);
  t.is(
    bodyReservationBytes({ 'content-length': '1000', 'content-encoding': 'gzip' }, limit),
    limit,
  );
  t.is(
    bodyReservationBytes({ 'content-length': '1000', 'content-encoding': 'identity' }, limit),
    1000,
  );
  t.is(bodyReservationBytes({ 'content-length': '-5' }, limit), limit);
});

test('reservations share the budget; each release gives its bytes back once', (t) => {
  const budget = new LargeBodyBudget(10);
  const first = budget.tryReserve(6);
  t.truthy(first);
  t.is(budget.tryReserve(5), undefined, 'does not fit beside the first');
  const second = budget.tryReserve(4);
  t.truthy(second);
  t.is(budget.reservedBytes, 10);
  first?.();
  first?.();
  t.is(budget.reservedBytes, 4, 'a second release of the same reservation changes nothing');
  t.is(budget.tryReserve(11), undefined, 'larger than the whole budget: never');
  second?.();
  t.is(budget.reservedBytes, 0);
  t.is(largeBodyBudgetBytes, 64 * mebibyte);
});

test('a fifth 16 MiB upload while four are read is 503 busy with Retry-After; the budget comes back as uploads end or are abandoned', async (t) => {
  t.timeout(120_000);
  const { url, admin, request } = await managedDaemon(t);
  const head =
    'POST /api/v2/Drivers HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
    `Authorization: Bearer ${admin}\r\nContent-Length: ${configurationBodyBytes}\r\n\r\n`;
  // A JSON document of exactly the route's limit: its start now, the rest when told.
  const start = `{"pad":"${'a'.repeat(65_536)}`;
  const rest = `${'a'.repeat(configurationBodyBytes - start.length - 2)}"}`;
  const uploads: { socket: Socket; answer: Promise<RawResponse> }[] = [];
  for (let index = 0; index < 5; index++) {
    const socket = await openSocket(url);
    uploads.push({ socket, answer: answerTo(socket, `${head}${start}`) });
  }
  // Four reserve their 16 MiB and wait for the rest of their bodies; one is refused at once.
  const refused = await Promise.race(
    uploads.map(({ answer }, index) => answer.then((response) => ({ response, index }))),
  );
  t.is(refused.response.status, 503);
  t.is(refused.response.headers['retry-after'], '1');
  t.is(refused.response.headers['content-type'], 'application/problem+json');
  t.is(refused.response.headers.connection, 'close', 'its body is not awaited');
  t.like(JSON.parse(refused.response.body), {
    code: 'busy',
    detail:
      'The gateway is reading or handling other large request bodies (64 MiB at most at once); try again in a moment.',
  });
  t.is(largeBodyBudget.reservedBytes, largeBodyBudgetBytes);
  // Routes with the default 256 KiB limit are not counted: they read their bodies meanwhile.
  const small = await request('/api/v2/TagQuerySet', { method: 'POST', body: {} });
  t.is(small.status, 400);
  t.is(small.json.code, 'validation-failed');

  const reading = uploads.filter((_, index) => index !== refused.index);
  uploads[refused.index]?.socket.destroy();
  // One upload ends: its body is read and judged (not a driver), and its 16 MiB given back.
  const [finished, ...abandoned] = reading as [(typeof reading)[0], ...typeof reading];
  finished.socket.write(rest);
  const judged = await finished.answer;
  t.is(judged.status, 400);
  t.is(JSON.parse(judged.body).code, 'validation-failed');
  await until(
    () => largeBodyBudget.reservedBytes === largeBodyBudgetBytes - configurationBodyBytes,
    'the finished upload gives its reservation back',
  );
  // The other three are abandoned by their clients: their reservations end with their connections.
  for (const { socket, answer } of abandoned) {
    answer.catch(() => undefined);
    const gone = closed(socket);
    socket.destroy();
    await gone;
  }
  await until(() => largeBodyBudget.reservedBytes === 0, 'abandoned uploads give theirs back');
  const again = await openSocket(url);
  const answer = await answerTo(again, `${head}${start}${rest}`);
  t.is(answer.status, 400, 'read again once the budget has room');
  again.destroy();
  finished.socket.destroy();
});
