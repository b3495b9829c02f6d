import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { ProfileService } from '../../../src/profile/profile-service.js';
import { ProfileStore } from '../../../src/profile/profile-store.js';
import { startApi } from '../../helpers/api-harness.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** The API with a real profile service over a profile file holding `profile`. */
async function setup(t: ExecutionContext, profile: unknown = {}) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(profile));
  const api = await startApi(t, {
    deps: async (base) => {
      const store = new ProfileStore({ file: profileFile, secretBox: base.secretBox });
      return { profile: new ProfileService(store, await store.load(), base.audit) };
    },
  });
  await api.addUser('admin', ['Administrators']);
  await api.addUser('viewer', ['Viewers']);
  const tokens = { admin: await api.signIn('admin'), viewer: await api.signIn('viewer') };
  const themesOnDisk = async () =>
    (JSON.parse(await readFile(profileFile, 'utf8')) as { themes?: unknown }).themes;
  return { api, tokens, themesOnDisk };
}

const plantBlue = {
  label: 'Plant blue',
  base: 'dark',
  productName: 'Line 4 HMI',
  variables: { accent: '#79c0ff', 'bar-bg': 'rgb(0, 30, 60)' },
};

test('any signed-in account lists the themes; anonymous callers cannot', async (t) => {
  const { api, tokens } = await setup(t);
  const list = await api.request('/api/v2/Themes', { token: tokens.viewer });
  t.is(list.status, 200);
  const body = list.body as { default: null; themes: { name: string; variables: object }[] };
  t.is(body.default, null);
  t.deepEqual(
    body.themes.map((theme) => theme.name),
    ['light', 'dark', 'high-contrast'],
  );
  t.like(body.themes[1]?.variables, { bg: '#0d1117' });
  t.is((await api.request('/api/v2/Themes')).status, 401);
});

test('/theme.css: public, text/css, revalidated with an ETag, security headers kept', async (t) => {
  const { api } = await setup(t);
  const first = await api.request('/theme.css');
  t.is(first.status, 200);
  t.is(first.headers.get('content-type'), 'text/css; charset=utf-8');
  t.is(first.headers.get('cache-control'), 'no-cache');
  t.is(first.headers.get('x-content-type-options'), 'nosniff');
  t.truthy(first.headers.get('content-security-policy'));
  const etag = first.headers.get('etag') ?? '';
  t.regex(etag, /^"[\w-]+"$/);
  t.regex(first.body as string, /@media \(prefers-color-scheme: dark\)/);
  t.regex(first.body as string, /\[data-theme="high-contrast"\] \{/);
  const again = await api.request('/theme.css', { headers: { 'If-None-Match': etag } });
  t.is(again.status, 304);
  t.is(again.body, '');
  const stale = await api.request('/theme.css', { headers: { 'If-None-Match': '"other"' } });
  t.is(stale.status, 200);
});

test('a custom theme is saved, listed, served in /theme.css, audited, and deleted', async (t) => {
  const { api, tokens, themesOnDisk } = await setup(t);
  const before = (await api.request('/theme.css')).headers.get('etag');
  const saved = await api.request('/api/v2/Themes/plant-blue', {
    method: 'PUT',
    token: tokens.admin,
    body: plantBlue,
  });
  t.is(saved.status, 200, JSON.stringify(saved.body));
  t.like(saved.body, {
    name: 'plant-blue',
    label: 'Plant blue',
    builtIn: false,
    colorScheme: 'dark',
    productName: 'Line 4 HMI',
    variables: { accent: '#79c0ff', 'bar-bg': 'rgb(0, 30, 60)', bg: '#0d1117' },
  });
  t.deepEqual(await themesOnDisk(), { custom: [{ name: 'plant-blue', ...plantBlue }] });
  const list = await api.request('/api/v2/Themes', { token: tokens.viewer });
  t.is((list.json.themes as unknown[]).length, 4);
  const css = await api.request('/theme.css');
  t.not(css.headers.get('etag'), before);
  t.regex(
    css.body as string,
    /\[data-theme="plant-blue"\] \{\n {2}color-scheme: dark;[^}]*--accent: #79c0ff;/,
  );
  t.like(
    api.logs.lines.find((line) => line.event === 'theme-saved'),
    { component: 'audit', theme: 'plant-blue', username: 'admin' },
  );

  const deleted = await api.request('/api/v2/Themes/plant-blue', {
    method: 'DELETE',
    token: tokens.admin,
  });
  t.is(deleted.status, 204);
  t.deepEqual(await themesOnDisk(), { custom: [] });
  t.false(((await api.request('/theme.css')).body as string).includes('plant-blue'));
  const again = await api.request('/api/v2/Themes/plant-blue', {
    method: 'DELETE',
    token: tokens.admin,
  });
  t.is(again.status, 404);
});

test('changing themes needs ThemeManage', async (t) => {
  const { api, tokens } = await setup(t);
  const refused = await api.request('/api/v2/Themes/mine', {
    method: 'PUT',
    token: tokens.viewer,
    body: plantBlue,
  });
  t.is(refused.status, 403);
});

test('bad themes are refused naming the field; nothing is saved', async (t) => {
  const { api, tokens, themesOnDisk } = await setup(t);
  const put = (name: string, body: unknown) =>
    api.request(`/api/v2/Themes/${name}`, { method: 'PUT', token: tokens.admin, body });
  const errors = (response: { json: Record<string, unknown> }) =>
    (response.json.errors as { path: string; message: string }[]).map(
      (error) => `${error.path}: ${error.message}`,
    );

  const injection = await put('x', { variables: { bg: '#fff;} body{background:url(//evil)' } });
  t.is(injection.status, 400);
  t.is(injection.headers.get('content-type'), 'application/problem+json');
  t.deepEqual(errors(injection), [
    'variables.bg: must be an opaque colour: #rgb, #rrggbb, rgb(r, g, b) or hsl(h, s%, l%)',
  ]);

  const unknown = await put('x', { variables: { 'font-family': '#000' } });
  t.is(unknown.status, 400);
  t.regex(errors(unknown).join('\n'), /font-family/);

  const contrast = await put('x', { variables: { 'bar-bg': '#5a7fa8' } });
  t.is(contrast.status, 400);
  t.deepEqual(errors(contrast), [
    'variables.bar-bg: Contrast too low: --bar-text on --bar-bg: 4.17:1, needs 4.5:1.',
  ]);

  const builtIn = await put('dark', { variables: {} });
  t.is(builtIn.status, 400);
  t.deepEqual(errors(builtIn), ["name: 'dark' is a built-in theme and cannot be changed."]);

  const badName = await put('Bad%20Name', { variables: {} });
  t.is(badName.status, 400);
  t.is(await themesOnDisk(), undefined);
});

test("the account's choice is stored with it and read back; null follows the browser", async (t) => {
  const { api, tokens } = await setup(t);
  const path = '/api/v2/Users/Current/Theme';
  t.deepEqual((await api.request(path, { token: tokens.viewer })).body, { theme: null });
  const chosen = await api.request(path, {
    method: 'PUT',
    token: tokens.viewer,
    body: { theme: 'high-contrast' },
  });
  t.is(chosen.status, 200);
  t.deepEqual(chosen.body, { theme: 'high-contrast' });
  t.is(api.users.findByName('viewer')?.theme, 'high-contrast');
  // Another sign-in of the account (another browser) sees the same choice.
  const elsewhere = await api.signIn('viewer');
  t.deepEqual((await api.request(path, { token: elsewhere })).body, { theme: 'high-contrast' });
  // Not the other accounts'.
  t.deepEqual((await api.request(path, { token: tokens.admin })).body, { theme: null });
  t.like(
    api.logs.lines.find((line) => line.event === 'theme-chosen'),
    { component: 'audit', username: 'viewer', theme: 'high-contrast' },
  );

  const unknown = await api.request(path, {
    method: 'PUT',
    token: tokens.viewer,
    body: { theme: 'nope' },
  });
  t.is(unknown.status, 400);
  t.like((unknown.json.errors as unknown[])[0], {
    path: 'theme',
    message: "No theme named 'nope'.",
  });

  const cleared = await api.request(path, {
    method: 'PUT',
    token: tokens.viewer,
    body: { theme: null },
  });
  t.deepEqual(cleared.body, { theme: null });
  t.is(api.users.findByName('viewer')?.theme, undefined);
  t.false('theme' in (api.users.findByName('viewer') ?? {}));
});

test('a plant default from the profile is :root, and deleting it follows the browser again', async (t) => {
  const { api, tokens, themesOnDisk } = await setup(t, {
    themes: { default: 'plant-blue', custom: [{ name: 'plant-blue', ...plantBlue }] },
  });
  const css = (await api.request('/theme.css')).body as string;
  t.false(css.includes('@media'));
  t.regex(css, /^:root \{\n {2}color-scheme: dark;[^}]*--accent: #79c0ff;/m);
  t.is((await api.request('/api/v2/Themes', { token: tokens.viewer })).json.default, 'plant-blue');
  await api.request('/api/v2/Themes/plant-blue', { method: 'DELETE', token: tokens.admin });
  t.deepEqual(await themesOnDisk(), { custom: [] });
  t.regex(
    (await api.request('/theme.css')).body as string,
    /@media \(prefers-color-scheme: dark\)/,
  );
});
