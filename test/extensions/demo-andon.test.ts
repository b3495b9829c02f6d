/**
 * The demo profile on a daemon: its extensions server serves the andon app of config/apps/andon,
 * and the API that app uses on its own origin, sharing the main listener's state.
 */
import test from 'ava';
import { defaultAppCsp } from '../../src/extensions/extensions-config.js';
import { adminToken, demoDaemon } from '../helpers/demo-daemon.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { openSse } from '../helpers/sse-client.js';

const adminPassword = 'a long new admin password';

test('the demo serves the andon app on the extensions server, with the API it reads on that origin', async (t) => {
  const clock = new ManualClock(Date.now());
  const { daemon, url, extensionsUrl, stateDir, logs } = await demoDaemon(t, { clock });
  if (!extensionsUrl) return t.fail('no extensions server');
  t.regex(extensionsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(daemon.extensionsUrl(), extensionsUrl);
  t.like(
    logs.lines.find((line) => line.msg === 'tagd ready'),
    { extensionsUrl },
  );
  t.like(
    logs.lines.find((line) => line.msg === 'extensions server ready'),
    {
      apps: ['/andon/'],
      enableApi: true,
      enableDocs: false,
    },
  );

  const page = await fetch(`${extensionsUrl}/andon/`);
  t.is(page.status, 200);
  t.is(page.headers.get('content-security-policy'), defaultAppCsp);
  const html = await page.text();
  t.regex(html, /<title>Andon board/);
  // Under the default CSP nothing inline would run: every script is a file, no handler attributes.
  for (const script of html.match(/<script[^>]*>[\s\S]*?<\/script>/g) ?? []) {
    t.regex(script, /^<script src="[^"]+"[^>]*><\/script>$/, script);
  }
  t.notRegex(html, /\son[a-z]+=/i, 'no inline event handlers');
  t.notRegex(html, /\sstyle=/i, 'no inline styles');
  const files: [string, string][] = [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['style.css', 'text/css; charset=utf-8'],
  ];
  for (const [file, type] of files) {
    const response = await fetch(`${extensionsUrl}/andon/${file}`);
    t.is(response.status, 200, file);
    t.is(response.headers.get('content-type'), type, file);
    await response.arrayBuffer();
  }

  // What app.js does: a cookie session on the extensions origin, then the tag stream.
  await adminToken(url, stateDir);
  const signIn = await fetch(`${extensionsUrl}/api/v2/Users/Authenticate?useCookies=true`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: adminPassword }),
  });
  t.is(signIn.status, 200);
  const cookies = signIn.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
  const stream = await openSse(`${extensionsUrl}/api/v2/Tags/Stream?pattern=Demo/**`, {
    Cookie: cookies,
  });
  t.teardown(() => stream.close());
  t.is(stream.status, 200);
  await stream.until((blocks) => blocks.some((block) => block.data), 'the first event');
  const first = stream.events()[0] as { fullTagId: string; quality: string }[];
  t.true(first.some((sample) => sample.fullTagId === 'Demo/Line1/Temperature'));
  t.true(first.every((sample) => sample.quality === 'Good'));
  clock.advance(1000);
  await stream.until(
    (blocks) => blocks.filter((block) => block.data).length >= 2,
    'a simulator scan',
  );
  stream.close();

  // One route list behind both listeners: a query set made on the main listener is polled here.
  const renew = await fetch(`${extensionsUrl}/api/v2/Users/Refresh`, {
    headers: { Cookie: cookies },
  });
  t.is(renew.status, 200, 'the session renews from its refresh cookie, as app.js does');
  await renew.arrayBuffer();
  const token = await signInForToken(url);
  const created = await fetch(`${url}/api/v2/TagQuerySet`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ bindings: [{ source: 'Demo/Line1/*', store: 'Local' }] }),
  });
  t.is(created.status, 200);
  const { srcSetId } = (await created.json()) as { srcSetId: string };
  const delta = await fetch(`${extensionsUrl}/api/v2/TagQuerySet/Delta/${srcSetId}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(delta.status, 200);
  await delta.arrayBuffer();

  // The main listener keeps its docs and never serves the apps; the extensions server no docs.
  t.is((await fetch(`${url}/swagger`)).status, 200);
  t.is((await fetch(`${url}/andon/`)).status, 404);
  t.is((await fetch(`${extensionsUrl}/swagger`)).status, 404);

  await daemon.stop();
  t.is(daemon.extensionsUrl(), undefined);
  await t.throwsAsync(() => fetch(`${extensionsUrl}/andon/`), undefined, 'closed at stop');
});

async function signInForToken(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: adminPassword }),
  });
  return ((await response.json()) as { token: string }).token;
}

test('an app folder that does not exist leaves that app out; the daemon and its API run', async (t) => {
  const { daemon, extensionsUrl, logs } = await demoDaemon(t, {
    profile: (demo: Record<string, unknown>) => {
      const extensions = demo.extensions as { apps: { name: string; folder: string }[] };
      extensions.apps.push({ name: 'gone', folder: '/nonexistent/tagd-app' });
    },
  });
  t.truthy(daemon.url());
  const error = logs.lines.find((line) => /^app left out/.test(String(line.msg)));
  t.like(error, { path: 'extensions.apps[1].folder' });
  t.regex(String(error?.msg), /The folder of app gone, \/nonexistent\/tagd-app, does not exist\./);
  t.is((await fetch(`${extensionsUrl}/gone/`)).status, 404);
  t.is((await fetch(`${extensionsUrl}/andon/`)).status, 200);
});
