import test from 'ava';
import { adminToken, demoDaemon } from './helpers/demo-daemon.js';
import { openSse } from './helpers/sse-client.js';

test('the daemon wires drivers, user management and tag streams into the API; stop ends streams first', async (t) => {
  const { daemon, url, stateDir, logs, clock } = await demoDaemon(t);
  const token = await adminToken(url, stateDir);
  const auth = { Authorization: `Bearer ${token}` };

  const drivers = (await (await fetch(`${url}/api/v2/Drivers`, { headers: auth })).json()) as {
    drivers: { name: string; type: string; state: string; tagsByQuality: { Good: number } }[];
  };
  const demo = drivers.drivers.find((driver) => driver.name === 'Demo');
  t.like(demo, { type: 'simulator', state: 'Running' });
  t.true((demo?.tagsByQuality.Good ?? 0) >= 7);
  t.false(JSON.stringify(drivers).includes('enc:v1'), 'no sealed secret, let alone a clear one');

  const created = await fetch(`${url}/api/v2/Users`, {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'olga', roles: ['Operators'] }),
  });
  t.is(created.status, 201);

  const stream = await openSse(`${url}/api/v2/Tags/Stream?pattern=Demo/**`, auth);
  t.is(stream.status, 200);
  await stream.until((blocks) => blocks.length >= 1, 'first event');
  clock.advance(1000); // a simulator scan
  await stream.until((blocks) => blocks.filter((block) => block.data).length >= 2, 'a scan');

  await daemon.stop();
  await stream.ended;
  const ended = logs.lines.find((line) => line.msg === 'tag stream ended');
  t.is(ended?.reason, 'shutdown', 'closed by the daemon, not by the listener drain');
});
