import test from 'ava';
import { managedDaemon } from '../../helpers/managed-daemon.js';

type Event = {
  id: number;
  kind: string;
  level: string;
  message: string;
  details: Record<string, unknown>;
};

test('Events answers the recent audit lines and warnings to Administrators only', async (t) => {
  const { request, operator, url } = await managedDaemon(t);
  // A refused sign-in is audited and warned of: it must show in the event view.
  const refused = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'not-the-password' }),
  });
  t.is(refused.status, 401);
  const all = await request('/api/v2/Events');
  t.is(all.status, 200);
  const events = all.json.events as Event[];
  const audit = events.filter((event) => event.kind === 'audit');
  t.deepEqual(
    audit.filter((event) => event.details.username === 'ops').map((event) => event.details.event),
    ['account-created', 'service-token-generated'],
  );
  t.deepEqual(
    audit.filter((event) => event.details.event === 'sign-in-failed').map((event) => event.level),
    ['warn'],
    'the refused sign-in is there',
  );
  t.false(JSON.stringify(events).includes('not-the-password'));
  const last = events.at(-1)?.id ?? 0;
  const none = await request(`/api/v2/Events?afterId=${last}`);
  t.deepEqual(none.json.events, []);
  t.is((await request('/api/v2/Events', { token: operator })).status, 403);
  const bad = await request('/api/v2/Events?kind=debug');
  t.is(bad.status, 400);
});
