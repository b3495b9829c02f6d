import { connect, type Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { pino } from 'pino';
import { HttpListener, type HttpListenerOptions } from '../../src/api/http-listener.js';
import { captureLogs } from '../helpers/log-capture.js';
import { closed, getOn, parseResponse, sendUntilClosed } from '../helpers/raw-http.js';
import { until } from '../helpers/until.js';

// Every 127.x address reaches a listener on 127.0.0.1 (Linux routes all of 127/8 to lo), so
// 127.0.0.2 and up stand for plant-network peers: these tests tell the listener that only
// 127.0.0.1 is loopback. One test keeps the real rule.
const onlyFirstIsLoopback = (address: string) => address === '127.0.0.1';

const handler = (_request: unknown, response: { end: (body: string) => void }) =>
  response.end('ok');

async function started(t: ExecutionContext, options: Partial<HttpListenerOptions>) {
  const listener = new HttpListener({
    host: '127.0.0.1',
    port: 0,
    handler,
    logger: pino({ level: 'silent' }),
    ...options,
  });
  await listener.start();
  t.teardown(() => listener.stop());
  return Number(new URL(listener.url() as string).port);
}

/** Connects from `from` (a local address) to the listener; rejects when refused. */
function connectFrom(port: number, from: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/**
 * One GET on a new connection from `from`: its status, or `refused` when the connection is
 * closed without an answer (what the listener does to a connection over a limit).
 */
async function probe(port: number, from: string): Promise<number | 'refused'> {
  const socket = await connectFrom(port, from);
  try {
    const text = await sendUntilClosed(
      socket,
      'GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    return text === '' ? 'refused' : parseResponse(text).status;
  } finally {
    socket.destroy();
  }
}

/**
 * The slow-headers attack: `count` sockets from `from`, each sending half a request head and
 * nothing more, each reopened as soon as the listener closes it. `refusals` counts the sockets
 * closed without a byte of answer; `stop()` ends it.
 */
function attack(port: number, from: string, count: number) {
  let running = true;
  const sockets = new Set<Socket>();
  const state = { refusals: 0, open: () => sockets.size };
  const open = () => {
    if (!running) return;
    const socket = connect({ port, host: '127.0.0.1', localAddress: from });
    sockets.add(socket);
    let answered = false;
    socket.on('data', () => {
      answered = true;
    });
    socket.on('error', () => undefined);
    socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: '));
    socket.once('close', () => {
      sockets.delete(socket);
      if (!answered) state.refusals += 1;
      // Reopened at once, like the reported attack; setImmediate lets the probes in between.
      if (running) setImmediate(open);
    });
  };
  for (let index = 0; index < count; index += 1) open();
  return {
    state,
    async stop() {
      running = false;
      const all = [...sockets];
      for (const socket of all) socket.destroy();
      await Promise.all(all.map(closed));
    },
  };
}

test('260 slow-header sockets from one plant address, reopened on close, lock no one else out', async (t) => {
  t.timeout(120_000);
  const { logger, lines } = captureLogs();
  // The default limits (256 in all, 32 per address), but a short headers timeout, so the
  // attacker's sockets are closed and reopened several times while the probes run.
  const port = await started(t, {
    headersTimeoutMs: 1_000,
    requestTimeoutMs: 1_000,
    isLoopbackPeer: onlyFirstIsLoopback,
    logger,
  });
  const attacker = attack(port, '127.0.0.2', 260);
  t.teardown(() => attacker.stop());
  // Saturated: the attacker's sockets beyond what it may hold are refused.
  await until(() => attacker.state.refusals > 0, 'a refused attack socket');
  t.true(attacker.state.open() > 0);

  // Probes over at least three headers timeouts, while the attack's sockets are recycled.
  const began = performance.now();
  const answers: (number | 'refused')[] = [];
  while (performance.now() - began < 3_500) {
    answers.push(await probe(port, '127.0.0.3'), await probe(port, '127.0.0.1'));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.true(answers.length >= 4);
  t.deepEqual(
    answers.filter((answer) => answer !== 200),
    [],
    'every probe from another plant address and from loopback is answered',
  );
  // The attacker itself is still held to its share: a probe from its address is refused.
  t.is(await probe(port, '127.0.0.2'), 'refused');

  const warnings = lines.filter((line) => /from one address/.test(String(line.msg)));
  t.is(warnings.filter((line) => line.level === 40).length, 1, 'one warning per start');
  t.is(warnings[0]?.remoteAddress, '127.0.0.2');
  t.is(warnings[0]?.maxConnectionsPerAddress, 32);
});

test('plant addresses together leave an eighth of maxConnections to loopback peers', async (t) => {
  const port = await started(t, {
    maxConnections: 16,
    maxConnectionsPerAddress: 4,
    isLoopbackPeer: onlyFirstIsLoopback,
  });
  const held: Socket[] = [];
  t.teardown(() => {
    for (const socket of held) socket.destroy();
  });
  // 14 plant connections (16 less the 2 kept for loopback), spread over four addresses, each
  // answered once and kept alive.
  for (let index = 0; index < 14; index += 1) {
    const socket = await connectFrom(port, `127.0.0.${2 + (index % 4)}`);
    held.push(socket);
    t.is((await getOn(socket, '/')).status, 200);
  }
  t.is(await probe(port, '127.0.0.9'), 'refused', 'a new plant address finds the plant share full');
  // Loopback takes the reserve, also several connections from one address.
  const local = [await connectFrom(port, '127.0.0.1'), await connectFrom(port, '127.0.0.1')];
  held.push(...local);
  for (const socket of local) t.is((await getOn(socket, '/')).status, 200);
  // And the total still holds for everyone: 16 are open.
  t.is(await probe(port, '127.0.0.1'), 'refused');

  // A plant connection that closes frees its slot for another plant address.
  const first = held.shift() as Socket;
  first.destroy();
  await closed(first);
  let answer: number | 'refused' = 'refused';
  const deadline = performance.now() + 30_000;
  // The listener learns of the close asynchronously: retry until it has.
  while (answer === 'refused' && performance.now() < deadline)
    answer = await probe(port, '127.0.0.9');
  t.is(answer, 200);
});

test('loopback peers are not held to maxConnectionsPerAddress', async (t) => {
  // The real rule: every 127.x address is loopback.
  const port = await started(t, { maxConnections: 16, maxConnectionsPerAddress: 2 });
  const sockets: Socket[] = [];
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
  });
  for (let index = 0; index < 6; index += 1) {
    const socket = await connectFrom(port, '127.0.0.1');
    sockets.push(socket);
    t.is((await getOn(socket, '/')).status, 200, `connection ${index + 1}`);
  }
});

test('maxConnectionsPerAddress holds for each plant address on its own', async (t) => {
  const port = await started(t, {
    maxConnectionsPerAddress: 2,
    isLoopbackPeer: onlyFirstIsLoopback,
  });
  const sockets: Socket[] = [];
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
  });
  for (const from of ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3']) {
    const socket = await connectFrom(port, from);
    sockets.push(socket);
    t.is((await getOn(socket, '/')).status, 200, from);
  }
  t.is(await probe(port, '127.0.0.2'), 'refused');
  t.is(await probe(port, '127.0.0.3'), 'refused');
  t.is(await probe(port, '127.0.0.4'), 200);
});
