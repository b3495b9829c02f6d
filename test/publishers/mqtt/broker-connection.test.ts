import test from 'ava';
import {
  BrokerConnection,
  maxReconnectDelayMs,
  reconnectDelayMs,
} from '../../../src/publishers/mqtt/broker-connection.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';
import { freePort, startMosquitto } from '../../helpers/mosquitto.js';

test('failed attempts are retried after 1 s, doubling to 30 s; one error line per outage', async (t) => {
  const port = await freePort();
  const clock = new ManualClock();
  const logs = captureLogs();
  let failures = 0;
  let onFailure: (() => void) | undefined;
  const nextFailure = () =>
    new Promise<void>((resolve) => {
      onFailure = resolve;
    });
  let connected = 0;
  let onConnect: (() => void) | undefined;
  const connection = new BrokerConnection(
    {
      brokerUrl: `mqtt://127.0.0.1:${port}`,
      clientId: 'backoff-test',
      auth: {},
      clock,
      log: logs.logger,
      name: 'plant',
    },
    {
      connected: () => {
        connected++;
        onConnect?.();
      },
      disconnected: () => {
        failures++;
        onFailure?.();
      },
    },
  );
  t.teardown(() => connection.stop());
  let failed = nextFailure();
  connection.start();
  await failed;
  const waits = [1000, 2000, 4000, 8000, 16000, 30000, 30000];
  t.is(waits[0], reconnectDelayMs);
  t.is(waits.at(-1), maxReconnectDelayMs);
  for (const wait of waits) {
    // The retry is the only timer; it has not fired one millisecond before its time.
    clock.advance(wait - 1);
    t.is(clock.pendingTimers(), 1, `before ${wait} ms`);
    failed = nextFailure();
    clock.advance(1);
    t.is(clock.pendingTimers(), 0, `at ${wait} ms`);
    await failed;
  }
  t.is(failures, waits.length + 1);
  const errors = logs.lines.filter((line) => line.level === 50);
  t.is(errors.length, 1);
  t.regex(
    String(errors[0]?.msg),
    /cannot connect to the broker \(connection refused \(ECONNREFUSED\)\); retrying\./,
  );
  t.notRegex(logs.text(), new RegExp(`127\\.0\\.0\\.1:${port}`));

  // The broker comes up: the next attempt connects, and the wait starts again from 1 s.
  await startMosquitto(t, { port });
  const up = new Promise<void>((resolve) => {
    onConnect = resolve;
  });
  clock.advance(maxReconnectDelayMs);
  await up;
  t.is(connected, 1);
  t.regex(logs.text(), /connected to the broker again after 8 failed attempts/);
});

test('a client certificate or key OpenSSL refuses is a failed attempt, retried, never a throw', async (t) => {
  // mqtt builds the TLS context inside connect(), synchronously: text that is no PEM (here the
  // start of /etc/passwd) made it throw, and the rejection of the attempt stopped the daemon.
  const passwd = 'root:x:0:0:root:/root:/bin/bash\n';
  const clock = new ManualClock();
  const logs = captureLogs();
  const reasons: string[] = [];
  let onFailure: (() => void) | undefined;
  const nextFailure = () =>
    new Promise<void>((resolve) => {
      onFailure = resolve;
    });
  const connection = new BrokerConnection(
    {
      brokerUrl: `mqtts://127.0.0.1:${await freePort()}`,
      clientId: 'tls-refused',
      auth: { cert: passwd, key: passwd },
      clock,
      log: logs.logger,
      name: 'plant',
    },
    {
      connected: () => t.fail('no connection can be made'),
      disconnected: (reason) => {
        reasons.push(reason);
        onFailure?.();
      },
    },
  );
  t.teardown(() => connection.stop());
  let failed = nextFailure();
  connection.start();
  await failed;
  t.regex(reasons[0] ?? '', /^the TLS set-up failed \(.+\)$/);
  t.is(clock.pendingTimers(), 1, 'the next attempt is scheduled');
  failed = nextFailure();
  clock.advance(reconnectDelayMs);
  await failed;
  t.is(reasons.length, 2);
  const errors = logs.lines.filter((line) => line.level === 50);
  t.is(errors.length, 1, 'one error line for the outage');
  t.regex(String(errors[0]?.msg), /cannot connect to the broker \(the TLS set-up failed/);
  t.false(JSON.stringify(logs.lines).includes('root:x:0'), 'nothing of the files is logged');
});
