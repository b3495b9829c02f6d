import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { maxBodyBytes } from '../../../src/api/json-bodies.js';
import type { LicenseState } from '../../../src/license/license.js';
import { ProfileService } from '../../../src/profile/profile-service.js';
import { ProfileStore } from '../../../src/profile/profile-store.js';
import { WebhookPublishers } from '../../../src/publishers/webhook/webhook-publishers.js';
import { Collections } from '../../../src/tags/collections.js';
import type { Sample } from '../../../src/tags/sample.js';
import { type ApiResponse, signInRoles, startApi } from '../../helpers/api-harness.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until } from '../../helpers/until.js';
import { startReceiver } from '../../helpers/webhook-receiver.js';

const serverLicense: LicenseState = {
  edition: 'server',
  licensee: 'Test plant',
  features: new Set(['dataRelay']),
};

const samples: Sample[] = [
  {
    fullTagId: 'Line1/Press/Temperature',
    utcTimestamp: '2026-01-01T00:00:01.000Z',
    quality: 'Good',
    value: 81.5,
  },
  {
    fullTagId: 'Line1/Press/Pressure',
    utcTimestamp: '2026-01-01T00:00:02.000Z',
    quality: 'Good',
    value: 4.25,
  },
  {
    fullTagId: 'Line2/Pump/Flow',
    utcTimestamp: '2026-01-01T00:00:03.000Z',
    quality: 'Good',
    value: 12,
  },
];
const [temperature, pressure, flow] = samples.map(
  ({ fullTagId, utcTimestamp, quality, value }) => ({
    fullTagId,
    utcTimestamp,
    quality,
    value,
  }),
);

const baseProfile = {
  collections: [
    { name: 'Line1', members: ['Line1/**'] },
    { name: 'Line2', members: ['Line2/**'] },
  ],
};
const basePath = '/api/v2/Collections';
const _sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Call = (
  path: string,
  options?: { method?: string; body?: unknown; token?: string },
) => Promise<ApiResponse>;

/** The API with a real profile service, collections and publishers (see publishers.test.ts). */
async function setup(t: ExecutionContext, license: LicenseState = serverLicense) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(baseProfile));
  let collections: Collections | undefined;
  let profile: ProfileService | undefined;
  let publishers: WebhookPublishers | undefined;
  const api = await startApi(t, {
    deps: async (base) => {
      base.store.write(samples);
      const store = new ProfileStore({ file: profileFile, secretBox: base.secretBox });
      const loaded = await store.load();
      profile = new ProfileService(store, loaded, base.audit);
      collections = new Collections(base.store, loaded.collections);
      await collections.start();
      publishers = new WebhookPublishers({
        store: base.store,
        collections,
        clock: base.clock,
        logger: base.logs.logger,
        license: () => license,
        version: '0.0.0-test',
      });
      const running = publishers;
      t.teardown(() => running.stopAll());
      return { profile, collections, publishers, license: () => license };
    },
  });
  const tokens = await signInRoles(api);
  const call: Call = (path, options = {}) => api.request(path, { token: tokens.admin, ...options });
  /** Creates a webhook publisher on `collections`, publishing every 5 s to `url`. */
  const publish = async (url: string, selected: string[]) => {
    const response = await call('/api/v2/Publishers/Webhooks', {
      method: 'POST',
      body: { name: 'feed', destinationUrl: url, collections: selected, updateIntervalSeconds: 5 },
    });
    if (response.status !== 201) throw new Error(JSON.stringify(response.body));
    return response;
  };
  return {
    api,
    call,
    publish,
    tokens,
    profileFile,
    collections: collections as Collections,
    profile: profile as ProfileService,
    publishers: publishers as WebhookPublishers,
  };
}

async function collectionsOnDisk(file: string): Promise<unknown> {
  return (JSON.parse(await readFile(file, 'utf8')) as { collections: unknown }).collections;
}

test('list, read and create: a new collection is saved and resolves against the tags at once', async (t) => {
  const { call, collections, profileFile } = await setup(t);
  const list = await call(basePath);
  t.is(list.status, 200);
  t.deepEqual(list.body, baseProfile.collections);
  const one = await call(`${basePath}/Line2`);
  t.is(one.status, 200);
  t.deepEqual(one.body, { name: 'Line2', members: ['Line2/**'] });

  const presses = { name: 'Press 1', members: ['Line1/Press/Pressure', 'Line3/*'] };
  const created = await call(basePath, { method: 'POST', body: presses });
  t.is(created.status, 201);
  t.deepEqual(created.body, presses);
  t.deepEqual(collections.members('Press 1'), ['Line1/Press/Pressure']);
  t.deepEqual(await collectionsOnDisk(profileFile), [...baseProfile.collections, presses]);
  t.deepEqual((await call(`${basePath}/Press%201`)).body, presses, 'a space is %20 in the path');
  t.deepEqual((await call(basePath)).body, [...baseProfile.collections, presses]);
});

test('a collection of 10,000 members (over 256 KiB) is created and replaced: the configuration routes take 16 MiB', async (t) => {
  const { call, collections, profileFile } = await setup(t);
  const members = Array.from({ length: 10_000 }, (_, i) => `Plant/Area${i % 10}/Tag${i}/Value`);
  const plant = { name: 'Plant', members: [...members, 'Line1/Press/Pressure'] };
  t.true(JSON.stringify(plant).length > maxBodyBytes, 'over the default limit');
  const created = await call(basePath, { method: 'POST', body: plant });
  t.is(created.status, 201);
  t.deepEqual(collections.members('Plant'), ['Line1/Press/Pressure']);
  const replaced = await call(`${basePath}/Plant`, {
    method: 'PUT',
    body: { members: [...members, 'Line2/Pump/Flow'] },
  });
  t.is(replaced.status, 200);
  t.deepEqual((await call(`${basePath}/Plant`)).body, {
    name: 'Plant',
    members: [...members, 'Line2/Pump/Flow'],
  });
  t.deepEqual(((await collectionsOnDisk(profileFile)) as unknown[]).length, 3);
});

test('a collection created over the API can be published at once', async (t) => {
  const { api, call, publish } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: { name: 'Pressures', members: ['**/Pressure'] } });
  const created = await publish(receiver.url, ['Pressures']);
  t.like(created.json.state, { status: 'On' });
  api.clock.advance(5000);
  await receiver.waitForRequests(1);
  t.deepEqual(receiver.requests[0]?.json, [pressure]);
});

test('a wrong body lists every field, a name in use is 409, and nothing is saved', async (t) => {
  const { call, profileFile } = await setup(t);
  const before = await readFile(profileFile, 'utf8');
  const cases: [unknown, { path: string; message: string }[]][] = [
    [
      { name: '', members: [] },
      [
        { path: 'name', message: 'Too small: expected string to have >=1 characters' },
        { path: 'name', message: 'may hold letters, digits, _ . : - and single spaces' },
        { path: 'members', message: 'Too small: expected array to have >=1 items' },
      ],
    ],
    [
      { name: 'a/b', members: ['bad path', 'x//y'] },
      [
        { path: 'name', message: 'may hold letters, digits, _ . : - and single spaces' },
        {
          path: 'members[0]',
          message:
            "Invalid tag path or pattern: segment 'bad path' may only hold letters, digits and _ . : -",
        },
        {
          path: 'members[1]',
          message:
            'Invalid tag path or pattern: it has an empty segment (leading, trailing or double slash)',
        },
      ],
    ],
    [
      { name: 'ok', members: ['a'], tags: ['b'] },
      [{ path: 'tags', message: "Unknown key 'tags'." }],
    ],
  ];
  for (const [body, errors] of cases) {
    const response = await call(basePath, { method: 'POST', body });
    t.is(response.status, 400, JSON.stringify(body));
    t.is(response.json.code, 'validation-failed');
    t.deepEqual(response.json.errors, errors, JSON.stringify(body));
  }
  const taken = await call(basePath, { method: 'POST', body: { name: 'Line1', members: ['x'] } });
  t.is(taken.status, 409);
  t.like(taken.json, {
    code: 'already-exists',
    detail: "A collection named 'Line1' already exists.",
  });
  t.is(await readFile(profileFile, 'utf8'), before, 'nothing was saved');
});

test('PUT replaces the members; a running publisher sends the new members next interval', async (t) => {
  const { api, call, publish, collections, profileFile, publishers } = await setup(t);
  const receiver = await startReceiver(t);
  await publish(receiver.url, ['Line1']);
  api.clock.advance(5000);
  await receiver.waitForRequests(1);
  t.deepEqual(receiver.requests[0]?.json, [temperature, pressure]);

  const replaced = await call(`${basePath}/Line1`, {
    method: 'PUT',
    body: { members: ['Line2/**', 'Line1/Press/Temperature'] },
  });
  t.is(replaced.status, 200);
  t.deepEqual(replaced.body, { name: 'Line1', members: ['Line2/**', 'Line1/Press/Temperature'] });
  t.deepEqual(collections.members('Line1'), ['Line1/Press/Temperature', 'Line2/Pump/Flow']);
  t.deepEqual((await collectionsOnDisk(profileFile)) as unknown[], [
    { name: 'Line1', members: ['Line2/**', 'Line1/Press/Temperature'] },
    baseProfile.collections[1],
  ]);
  // Let the first delivery's outcome land before the next tick (one delivery at a time).
  await until(() => publishers.get('feed')?.lastDelivery !== undefined, 'the first outcome');
  api.clock.advance(5000);
  await receiver.waitForRequests(2);
  t.deepEqual(receiver.requests[1]?.json, [temperature, flow]);

  const withName = await call(`${basePath}/Line2`, {
    method: 'PUT',
    body: { name: 'Line2', members: ['Line2/Pump/*'] },
  });
  t.is(withName.status, 200);
  const renamed = await call(`${basePath}/Line2`, {
    method: 'PUT',
    body: { name: 'Line9', members: ['x'] },
  });
  t.is(renamed.status, 400);
  t.deepEqual(renamed.json.errors, [
    {
      path: 'name',
      message: "The name cannot change: it must be 'Line2' (the path's) or left out.",
    },
  ]);
  const unknown = await call(`${basePath}/Nope`, { method: 'PUT', body: { members: ['x'] } });
  t.is(unknown.status, 404);
  t.like(unknown.json, {
    code: 'collection-not-found',
    detail: "Collection 'Nope' does not exist.",
  });
});

test('DELETE is allowed while a publisher uses it: it keeps publishing the rest, then cannot start', async (t) => {
  const { api, call, publish, collections, profileFile } = await setup(t);
  const receiver = await startReceiver(t);
  await publish(receiver.url, ['Line1', 'Line2']);
  const deleted = await call(`${basePath}/Line2`, { method: 'DELETE' });
  t.is(deleted.status, 204);
  t.is(deleted.body, '');
  t.false(collections.has('Line2'));
  t.deepEqual(await collectionsOnDisk(profileFile), [baseProfile.collections[0]]);
  t.is((await call(`${basePath}/Line2`)).status, 404);

  const feed = await call('/api/v2/Publishers/Webhooks/feed');
  t.like(feed.json, { collections: ['Line1', 'Line2'], state: { status: 'On' } });
  api.clock.advance(5000);
  await receiver.waitForRequests(1);
  t.deepEqual(receiver.requests[0]?.json, [temperature, pressure]);
  t.true(
    api.logs.lines.some(
      (line) =>
        line.msg ===
        "Collection 'Line2' of webhook publisher 'feed' no longer exists; its tags are not published.",
    ),
  );

  await call('/api/v2/Publishers/Webhooks/feed/Stop', { method: 'POST' });
  const restarted = await call('/api/v2/Publishers/Webhooks/feed/Start', { method: 'POST' });
  t.like(restarted.json, { status: 'Off', reason: "Collection 'Line2' does not exist." });

  const audit = api.logs.lines.find((line) => line.event === 'collection-deleted');
  t.like(audit, {
    component: 'audit',
    collection: 'Line2',
    username: 'admin',
    publishers: ['feed'],
    msg: 'profile changed',
  });
  const again = await call(`${basePath}/Line2`, { method: 'DELETE' });
  t.is(again.status, 404);
  t.is(again.json.code, 'collection-not-found');
});

test('every change is audited with who and what', async (t) => {
  const { api, call } = await setup(t);
  await call(basePath, { method: 'POST', body: { name: 'C', members: ['Line1/**'] } });
  await call(`${basePath}/C`, { method: 'PUT', body: { members: ['Line2/**'] } });
  await call(`${basePath}/C`, { method: 'DELETE' });
  const lines = api.logs.lines
    .filter((line) => String(line.event).startsWith('collection-'))
    .map(({ component, event, collection, username, publishers, msg }) => ({
      component,
      event,
      collection,
      username,
      publishers,
      msg,
    }));
  const line = (event: string, publishers?: string[]) => ({
    component: 'audit',
    event,
    collection: 'C',
    username: 'admin',
    publishers,
    msg: 'profile changed',
  });
  t.deepEqual(lines, [
    line('collection-created'),
    line('collection-replaced'),
    line('collection-deleted', []),
  ]);
});

test('only CollectionManage reads or changes collections; no license is needed', async (t) => {
  const { call, tokens } = await setup(t, { edition: 'unlicensed', features: new Set() });
  for (const token of [tokens.operator, tokens.viewer]) {
    for (const [method, path, body] of [
      ['GET', basePath],
      ['GET', `${basePath}/Line1`],
      ['POST', basePath, { name: 'X', members: ['a'] }],
      ['PUT', `${basePath}/Line1`, { members: ['a'] }],
      ['DELETE', `${basePath}/Line1`],
    ] as const) {
      const response = await call(path, { method, body, token });
      t.is(response.status, 403, `${method} ${path}`);
      t.is(response.json.code, 'forbidden');
    }
  }
  t.is((await call(basePath, { token: '' })).status, 401);
  const created = await call(basePath, { method: 'POST', body: { name: 'X', members: ['a'] } });
  t.is(created.status, 201, 'an unlicensed installation manages collections');
});
