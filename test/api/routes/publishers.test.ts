import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { LicenseState } from '../../../src/license/license.js';
import { ProfileService } from '../../../src/profile/profile-service.js';
import { ProfileStore } from '../../../src/profile/profile-store.js';
import { WebhookPublishers } from '../../../src/publishers/webhook/webhook-publishers.js';
import { Collections } from '../../../src/tags/collections.js';
import type { Sample } from '../../../src/tags/sample.js';
import { type ApiResponse, signInRoles, startApi } from '../../helpers/api-harness.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { until, untilTimeoutMs } from '../../helpers/until.js';

const serverLicense: LicenseState = {
  edition: 'server',
  licensee: 'Test plant',
  features: new Set(['dataRelay']),
};
const enterpriseLicense: LicenseState = {
  edition: 'enterprise',
  licensee: 'Test plant',
  features: new Set(['dataRelay']),
};
const standardLicense: LicenseState = {
  edition: 'standard',
  licensee: 'Test plant',
  features: new Set(),
};
const noLicense: LicenseState = { edition: 'unlicensed', features: new Set() };

const samples: Sample[] = [
  {
    fullTagId: 'Line1/Press/Temperature',
    utcTimestamp: '2026-01-01T00:00:01.000Z',
    quality: 'Good',
    value: 81.5,
    metadata: { unit: '°C' },
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

const line1Payload = [
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
];

const baseProfile = {
  collections: [
    { name: 'Line1', members: ['Line1/**'] },
    { name: 'Line2', members: ['Line2/**'] },
  ],
};

const zeroCounters = { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 };
const urlSecret = 'url-secret-7f3a';
const tokenSecret = 'tok-secret-9c2e';
const basePath = '/api/v2/Publishers/Webhooks';

/** One request a receiver got. */
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A webhook receiver on 127.0.0.1; `status` is what it answers. */
async function startReceiver(t: ExecutionContext) {
  const received: Received[] = [];
  const control = { status: 200 };
  const server = createServer((request, response) => {
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: JSON.parse(text),
      });
      response.statusCode = control.status;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { received, control, url: `${base}/ingest/${urlSecret}` };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends an API request (as admin unless told otherwise). */
type Call = (
  path: string,
  options?: { method?: string; body?: unknown; token?: string },
) => Promise<ApiResponse>;

/** Reads a publisher until its state satisfies `check` (deliveries end in real time). */
async function stateWhen(
  call: Call,
  name: string,
  check: (state: Record<string, unknown>) => boolean,
): Promise<ApiResponse> {
  const deadline = Date.now() + untilTimeoutMs;
  for (;;) {
    const response = await call(`${basePath}/${name}`);
    if (check(publisherState(response))) return response;
    if (Date.now() > deadline)
      throw new Error(`state of ${name}: ${JSON.stringify(response.body)}`);
    await sleep(10);
  }
}

interface SetupOptions {
  license?: LicenseState;
  /** Profile document written before the start (default: two collections, no publisher). */
  profile?: unknown;
}

/**
 * The API with a real ProfileService on a temp profile file, Collections on the harness's
 * store and the real WebhookPublishers on its manual clock; accounts admin (Administrators),
 * operator (Operators) and viewer (Viewers).
 */
async function setup(t: ExecutionContext, options: SetupOptions = {}) {
  const folder = await tempDir(t);
  const profileFile = join(folder, 'profile.json');
  await writeFile(profileFile, JSON.stringify(options.profile ?? baseProfile));
  const license = { current: options.license ?? serverLicense };
  let profileStore: ProfileStore | undefined;
  let profile: ProfileService | undefined;
  let publishers: WebhookPublishers | undefined;
  const api = await startApi(t, {
    deps: async (base) => {
      base.store.write(samples);
      profileStore = new ProfileStore({
        file: profileFile,
        secretBox: base.secretBox,
        logger: base.logs.logger.child({ component: 'profile' }),
      });
      const loaded = await profileStore.load();
      profile = new ProfileService(profileStore, loaded, base.audit);
      const collections = new Collections(base.store, loaded.collections);
      await collections.start();
      publishers = new WebhookPublishers({
        store: base.store,
        collections,
        clock: base.clock,
        logger: base.logs.logger,
        license: () => license.current,
        version: '0.0.0-test',
      });
      await publishers.startAll(loaded.publishers.webhooks);
      const running = publishers;
      t.teardown(() => running.stopAll());
      return { profile, collections, publishers, license: () => license.current };
    },
  });
  const responses: ApiResponse[] = [];
  const tokens = await signInRoles(api);
  // Every answer is kept, so a test can prove no secret ever left in one.
  const call: Call = async (path, requestOptions = {}) => {
    const response = await api.request(path, { token: tokens.admin, ...requestOptions });
    responses.push(response);
    return response;
  };
  return {
    api,
    call,
    responses,
    tokens,
    license,
    profileFile,
    profileStore: profileStore as ProfileStore,
    profile: profile as ProfileService,
    publishers: publishers as WebhookPublishers,
  };
}

function feedConfig(url: string, overrides: Record<string, unknown> = {}) {
  return {
    name: 'plant-feed',
    destinationUrl: url,
    authentication: { mode: 'Bearer token', bearerToken: tokenSecret },
    collections: ['Line1'],
    updateIntervalSeconds: 5,
    ...overrides,
  };
}

const maskedFeed = {
  name: 'plant-feed',
  destinationUrl: '********',
  authentication: { mode: 'Bearer token', bearerToken: '********' },
  collections: ['Line1'],
  loggingMode: 'Snapshot',
  updateIntervalSeconds: 5,
  autoConnect: true,
  everythingBufferSize: 100_000,
  gzip: false,
};

async function profileOnDisk(file: string): Promise<{ text: string; json: ProfileJson }> {
  const text = await readFile(file, 'utf8');
  return { text, json: JSON.parse(text) as ProfileJson };
}

type ProfileJson = {
  publishers?: { webhooks: Record<string, unknown>[] };
  collections?: unknown[];
};

function publisherState(response: ApiResponse): Record<string, unknown> {
  return response.json.state as Record<string, unknown>;
}

test('an administrator creates a publisher: 201, secrets masked, sealed on disk, and it delivers', async (t) => {
  const { api, call, profileFile } = await setup(t);
  const receiver = await startReceiver(t);
  const created = await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  t.is(created.status, 201);
  t.deepEqual(created.body, {
    ...maskedFeed,
    state: { name: 'plant-feed', status: 'On', counters: zeroCounters },
  });

  const disk = await profileOnDisk(profileFile);
  const saved = disk.json.publishers?.webhooks[0] as Record<string, unknown>;
  t.regex(String(saved.destinationUrl), /^enc:v1:/);
  t.regex(String((saved.authentication as Record<string, unknown>).bearerToken), /^enc:v1:/);
  t.false(disk.text.includes(urlSecret));
  t.false(disk.text.includes(tokenSecret));
  t.false(disk.text.includes(receiver.url.replace(`/ingest/${urlSecret}`, '')));

  api.clock.advance(5000);
  await until(() => receiver.received.length === 1, 'the first POST');
  const [first] = receiver.received;
  t.is(first?.method, 'POST');
  t.is(first?.url, `/ingest/${urlSecret}`);
  t.is(first?.headers.authorization, `Bearer ${tokenSecret}`);
  t.deepEqual(first?.body, line1Payload);

  const shown = await stateWhen(call, 'plant-feed', (state) => state.lastDelivery !== undefined);
  t.is(shown.status, 200);
  const state = publisherState(shown);
  t.is(state.status, 'On');
  t.deepEqual(state.counters, { ...zeroCounters, batches: 1, samples: 2 });
  t.like(state.lastDelivery, {
    at: new Date(api.clock.now()).toISOString(),
    ok: true,
    httpStatus: 200,
    attempts: 1,
    samples: 2,
  });
  t.is(typeof (state.lastDelivery as { durationMs: unknown }).durationMs, 'number');
  const health = await call('/api/v2/Tags/Sample/Publishers/plant-feed/LastDeliverySuccess');
  t.is(health.json.value, true);
});

test('GET lists every publisher in profile order, masked, with its state', async (t) => {
  const receiver = await startReceiver(t);
  const { call, profileFile } = await setup(t, {
    profile: {
      ...baseProfile,
      publishers: {
        webhooks: [
          feedConfig(receiver.url),
          {
            name: 'spare',
            destinationUrl: `${receiver.url}/spare`,
            collections: ['Line2'],
            autoConnect: false,
          },
        ],
      },
    },
  });
  // Plaintext secrets written by hand are sealed when the profile loads.
  const disk = await profileOnDisk(profileFile);
  t.false(disk.text.includes(urlSecret));
  t.false(disk.text.includes(tokenSecret));

  const list = await call(basePath);
  t.is(list.status, 200);
  t.deepEqual(list.body, [
    { ...maskedFeed, state: { name: 'plant-feed', status: 'On', counters: zeroCounters } },
    {
      name: 'spare',
      destinationUrl: '********',
      authentication: { mode: 'None' },
      collections: ['Line2'],
      loggingMode: 'Snapshot',
      updateIntervalSeconds: 10,
      autoConnect: false,
      everythingBufferSize: 100_000,
      gzip: false,
      state: {
        name: 'spare',
        status: 'Off',
        reason: 'Auto Connect is off.',
        counters: zeroCounters,
      },
    },
  ]);
  const one = await call(`${basePath}/spare`);
  t.is(one.status, 200);
  t.deepEqual(one.body, (list.body as unknown[])[1]);
});

test('permissions: Operators read but do not change; Viewers and anonymous callers do neither', async (t) => {
  const receiver = await startReceiver(t);
  const { call, tokens } = await setup(t, {
    profile: { ...baseProfile, publishers: { webhooks: [feedConfig(receiver.url)] } },
  });
  const operator = { token: tokens.operator };
  t.is((await call(basePath, operator)).status, 200);
  t.is((await call(`${basePath}/plant-feed`, operator)).status, 200);
  const changes: [string, string, unknown?][] = [
    ['POST', basePath, feedConfig(receiver.url, { name: 'other' })],
    ['PUT', `${basePath}/plant-feed`, feedConfig(receiver.url)],
    ['DELETE', `${basePath}/plant-feed`],
    ['POST', `${basePath}/plant-feed/Start`],
    ['POST', `${basePath}/plant-feed/Stop`],
  ];
  for (const [method, path, body] of changes) {
    const response = await call(path, { method, body, ...operator });
    t.is(response.status, 403, `${method} ${path}`);
    t.is(response.json.code, 'forbidden', `${method} ${path}`);
  }
  const viewer = await call(basePath, { token: tokens.viewer });
  t.is(viewer.status, 403);
  t.is(viewer.json.code, 'forbidden');
  const anonymous = await call(basePath, { token: '' });
  t.is(anonymous.status, 401);
});

test('validation lists every wrong field with the spec messages, and saves nothing', async (t) => {
  const { call, profileFile } = await setup(t);
  const before = await readFile(profileFile, 'utf8');
  const cases: [unknown, { path: string; message: string }[]][] = [
    [
      { name: 'a', collections: [''] },
      [
        { path: 'destinationUrl', message: 'You must provide a webhook destination URL.' },
        { path: 'collections[0]', message: 'You must select a collection.' },
      ],
    ],
    [
      { name: 'a', destinationUrl: '   ', collections: [] },
      [
        { path: 'destinationUrl', message: 'You must provide a webhook destination URL.' },
        { path: 'collections', message: 'You must select a collection.' },
      ],
    ],
    [
      { name: 'a', destinationUrl: 'http://h/x' },
      [{ path: 'collections', message: 'You must select a collection.' }],
    ],
    [
      { name: 'a', destinationUrl: 'ftp://h/x', collections: ['Line1', ' '] },
      [
        {
          path: 'destinationUrl',
          message: 'The destination URL must be an http:// or https:// address.',
        },
        { path: 'collections[1]', message: 'You must select a collection.' },
      ],
    ],
    [
      {
        name: 'a',
        destinationUrl: 'http://h/x',
        collections: ['Line1'],
        authentication: { mode: 'Bearer token' },
      },
      [{ path: 'authentication.bearerToken', message: 'You must provide a bearer token.' }],
    ],
    [
      {
        name: 'a',
        destinationUrl: 'http://h/x',
        collections: ['Line1'],
        authentication: { mode: 'API key header', apiKeyHeaderValue: '' },
      },
      [
        {
          path: 'authentication.apiKeyHeaderName',
          message: 'You must provide an API key header name.',
        },
        {
          path: 'authentication.apiKeyHeaderValue',
          message: 'You must provide an API key header value.',
        },
      ],
    ],
    [
      {
        name: 'a',
        destinationUrl: 'http://h/x',
        collections: ['Line1'],
        authentication: { mode: 'Basic auth' },
      },
      [
        {
          path: 'authentication.basicAuthUsername',
          message: 'You must provide a basic auth username.',
        },
        {
          path: 'authentication.basicAuthPassword',
          message: 'You must provide a basic auth password.',
        },
      ],
    ],
    [
      {
        name: 'a',
        destinationUrl: 'http://h/x',
        collections: ['Line1'],
        authentication: { mode: 'Digest' },
      },
      [
        {
          path: 'authentication.mode',
          message: 'Must be one of: None, Bearer token, API key header, Basic auth.',
        },
      ],
    ],
    ...[0, 1.5, 86_401, '10'].map((interval): [unknown, { path: string; message: string }[]] => [
      {
        name: 'a',
        destinationUrl: 'http://h/x',
        collections: ['Line1'],
        updateIntervalSeconds: interval,
      },
      [
        {
          path: 'updateIntervalSeconds',
          message: 'The update interval must be a whole number of seconds from 1 to 86400.',
        },
      ],
    ]),
    [
      { name: 'a', destinationUrl: 'http://h/x', collections: ['Line1'], retries: 5 },
      [{ path: 'retries', message: "Unknown key 'retries'." }],
    ],
  ];
  for (const [body, errors] of cases) {
    const response = await call(basePath, { method: 'POST', body });
    t.is(response.status, 400, JSON.stringify(body));
    t.is(response.headers.get('content-type'), 'application/problem+json');
    t.like(response.json, { code: 'validation-failed', status: 400 });
    t.deepEqual(response.json.errors, errors, JSON.stringify(body));
  }
  t.is(await readFile(profileFile, 'utf8'), before, 'nothing was saved');
  t.deepEqual((await call(basePath)).body, []);
});

test('a name in use is 409 already-exists and the first publisher is untouched', async (t) => {
  const receiver = await startReceiver(t);
  const { call, profile } = await setup(t);
  t.is((await call(basePath, { method: 'POST', body: feedConfig(receiver.url) })).status, 201);
  const again = await call(basePath, {
    method: 'POST',
    body: feedConfig('http://127.0.0.1:1/other', { collections: ['Line2'] }),
  });
  t.is(again.status, 409);
  t.like(again.json, {
    code: 'already-exists',
    detail: "A publisher named 'plant-feed' already exists.",
  });
  const [only, ...rest] = profile.current().publishers.webhooks;
  t.is(rest.length, 0);
  t.is(only?.destinationUrl, receiver.url);
  t.deepEqual(only?.collections, ['Line1']);
});

test("an MQTT publisher's name is 409 already-exists too: the kinds share the health tags", async (t) => {
  const cloud = {
    name: 'cloud',
    brokerUrl: 'mqtt://127.0.0.1:1',
    collections: ['Line1'],
    autoConnect: false,
  };
  const { call, profile, profileFile } = await setup(t, {
    profile: { ...baseProfile, publishers: { mqtt: [cloud] } },
  });
  const before = await readFile(profileFile, 'utf8');
  const clash = await call(basePath, {
    method: 'POST',
    body: feedConfig('http://127.0.0.1:1/x', { name: 'cloud' }),
  });
  t.is(clash.status, 409);
  t.is(clash.headers.get('content-type'), 'application/problem+json');
  t.like(clash.json, {
    code: 'already-exists',
    detail: "A publisher named 'cloud' already exists.",
  });
  t.is(await readFile(profileFile, 'utf8'), before, 'nothing was saved');
  t.deepEqual(profile.current().publishers.webhooks, []);
  t.deepEqual(
    profile.current().publishers.mqtt.map((publisher) => publisher.name),
    ['cloud'],
  );
});

test('a caFile the publisher could not use is 400 naming it, on POST and PUT; nothing is saved', async (t) => {
  const { call, profile } = await setup(t);
  const folder = await tempDir(t);
  const notPem = join(folder, 'passwd');
  await writeFile(notPem, 'root:x:0:0:root:/root:/bin/bash\n');
  const created = await call(basePath, {
    method: 'POST',
    body: feedConfig('https://127.0.0.1:1/x', { caFile: notPem }),
  });
  t.is(created.status, 400);
  t.deepEqual(created.json.errors, [
    {
      path: 'caFile',
      message: `The CA file ${notPem} cannot be used: it holds no PEM certificate.`,
    },
  ]);
  t.deepEqual(profile.current().publishers.webhooks, []);
  t.is(
    (await call(basePath, { method: 'POST', body: feedConfig('https://127.0.0.1:1/x') })).status,
    201,
  );
  const replaced = await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: feedConfig('https://127.0.0.1:1/x', { caFile: join(folder, 'missing.pem') }),
  });
  t.is(replaced.status, 400);
  t.deepEqual(
    (replaced.json.errors as { path: string }[]).map((error) => error.path),
    ['caFile'],
  );
  t.is(profile.current().publishers.webhooks[0]?.caFile, undefined);
});

test('a mask in a new publisher is refused: there is no stored secret behind it', async (t) => {
  const { call } = await setup(t);
  const response = await call(basePath, {
    method: 'POST',
    body: feedConfig('http://127.0.0.1:1/x', {
      authentication: { mode: 'Bearer token', bearerToken: '********' },
    }),
  });
  t.is(response.status, 400);
  t.deepEqual(response.json.errors, [
    {
      path: 'authentication.bearerToken',
      message: "'********' keeps a stored secret, and none is stored here: send the value.",
    },
  ]);
});

test('PUT with the masks GET returned keeps the stored secrets; a new secret replaces one', async (t) => {
  const { api, call, profileFile, profileStore, profile } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  const shown = await call(`${basePath}/plant-feed`);
  const { state: _state, ...edited } = shown.json;
  const replaced = await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: { ...edited, updateIntervalSeconds: 7, collections: ['Line1', 'Line2'] },
  });
  t.is(replaced.status, 200);
  t.like(replaced.json, {
    ...maskedFeed,
    updateIntervalSeconds: 7,
    collections: ['Line1', 'Line2'],
  });
  t.is(publisherState(replaced).status, 'On', 'a running publisher keeps running');
  const inForce = profile.current().publishers.webhooks[0];
  t.is(inForce?.destinationUrl, receiver.url);
  t.deepEqual(inForce?.authentication, { mode: 'Bearer token', bearerToken: tokenSecret });
  // What is on disk opens to the same secrets, and holds them sealed.
  const reloaded = await profileStore.load();
  t.deepEqual(reloaded.publishers.webhooks[0], inForce);
  t.false((await readFile(profileFile, 'utf8')).includes(tokenSecret));

  api.clock.advance(7000);
  await until(() => receiver.received.length === 1, 'a POST with the kept secrets');
  t.is(receiver.received[0]?.headers.authorization, `Bearer ${tokenSecret}`);
  t.is(receiver.received[0]?.url, `/ingest/${urlSecret}`);
  t.is((receiver.received[0]?.body as unknown[] | undefined)?.length, 3, 'Line1 and Line2');

  // No name in the body: the path's. A new token replaces the stored one.
  const rotated = await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: {
      destinationUrl: '********',
      authentication: { mode: 'Bearer token', bearerToken: 'rotated-token' },
      collections: ['Line1'],
      updateIntervalSeconds: 7,
    },
  });
  t.is(rotated.status, 200);
  t.is(rotated.json.name, 'plant-feed');
  t.like(rotated.json.authentication, { bearerToken: '********' });
  t.is(profile.current().publishers.webhooks[0]?.destinationUrl, receiver.url);
  t.is(publisherState(rotated).status, 'On');
  await stateWhen(call, 'plant-feed', (state) => state.lastDelivery !== undefined);
  api.clock.advance(7000);
  await until(() => receiver.received.length === 2, 'a POST with the new token');
  t.is(receiver.received[1]?.headers.authorization, 'Bearer rotated-token');
});

test('PUT refuses a different name, a mask with nothing stored behind it, and spec violations', async (t) => {
  const { call, profile } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  const path = `${basePath}/plant-feed`;

  const renamed = await call(path, {
    method: 'PUT',
    body: feedConfig(receiver.url, { name: 'x' }),
  });
  t.is(renamed.status, 400);
  t.deepEqual(renamed.json.errors, [
    {
      path: 'name',
      message: "The name cannot change: it must be 'plant-feed' (the path's) or left out.",
    },
  ]);

  const newMode = await call(path, {
    method: 'PUT',
    body: feedConfig('********', {
      authentication: { mode: 'Basic auth', basicAuthUsername: 'u', basicAuthPassword: '********' },
    }),
  });
  t.is(newMode.status, 400);
  t.deepEqual(newMode.json.errors, [
    {
      path: 'authentication.basicAuthPassword',
      message: "'********' keeps a stored secret, and none is stored here: send the value.",
    },
  ]);

  const broken = await call(path, {
    method: 'PUT',
    body: { destinationUrl: '', collections: [''], updateIntervalSeconds: 0 },
  });
  t.is(broken.status, 400);
  t.deepEqual(broken.json.errors, [
    { path: 'destinationUrl', message: 'You must provide a webhook destination URL.' },
    { path: 'collections[0]', message: 'You must select a collection.' },
    {
      path: 'updateIntervalSeconds',
      message: 'The update interval must be a whole number of seconds from 1 to 86400.',
    },
  ]);

  const { name: _name, ...nameless } = feedConfig(receiver.url);
  const unknown = await call(`${basePath}/nope`, { method: 'PUT', body: nameless });
  t.is(unknown.status, 404);
  t.like(unknown.json, { code: 'not-found', detail: "Webhook publisher 'nope' does not exist." });

  const kept = profile.current().publishers.webhooks;
  t.is(kept.length, 1);
  t.deepEqual(kept[0]?.authentication, { mode: 'Bearer token', bearerToken: tokenSecret });
});

test('DELETE stops and removes the publisher (204), then it is 404', async (t) => {
  const { api, call, profileFile, publishers } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  const deleted = await call(`${basePath}/plant-feed`, { method: 'DELETE' });
  t.is(deleted.status, 204);
  t.is(deleted.body, '');
  t.deepEqual((await profileOnDisk(profileFile)).json.publishers?.webhooks, []);
  t.is(publishers.get('plant-feed'), undefined);
  t.is((await call(`${basePath}/plant-feed`)).status, 404);
  t.deepEqual((await call(basePath)).body, []);
  api.clock.advance(60_000);
  await sleep(50);
  t.is(receiver.received.length, 0, 'a deleted publisher sends nothing');
  const again = await call(`${basePath}/plant-feed`, { method: 'DELETE' });
  t.is(again.status, 404);
  t.is(again.json.detail, "Webhook publisher 'plant-feed' does not exist.");
});

test('Stop and Start return the state; a start that cannot happen answers 200, Off and why', async (t) => {
  const { api, call, profile } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });

  const stopped = await call(`${basePath}/plant-feed/Stop`, { method: 'POST' });
  t.is(stopped.status, 200);
  t.deepEqual(stopped.body, {
    name: 'plant-feed',
    status: 'Off',
    reason: 'stopped',
    counters: zeroCounters,
  });
  api.clock.advance(10_000);
  await sleep(50);
  t.is(receiver.received.length, 0, 'a stopped publisher sends nothing');
  t.true(profile.current().publishers.webhooks[0]?.autoConnect, 'the profile is not changed');

  const started = await call(`${basePath}/plant-feed/Start`, { method: 'POST' });
  t.is(started.status, 200);
  t.deepEqual(started.body, { name: 'plant-feed', status: 'On', counters: zeroCounters });
  api.clock.advance(5000);
  await until(() => receiver.received.length === 1, 'a POST after the start');

  const orphan = await call(basePath, {
    method: 'POST',
    body: feedConfig(receiver.url, { name: 'orphan', collections: ['Line1', 'Gone'] }),
  });
  t.is(orphan.status, 201, 'a publisher may name a collection that does not exist yet');
  t.like(publisherState(orphan), { status: 'Off', reason: "Collection 'Gone' does not exist." });
  const refused = await call(`${basePath}/orphan/Start`, { method: 'POST' });
  t.is(refused.status, 200);
  t.deepEqual(refused.body, {
    name: 'orphan',
    status: 'Off',
    reason: "Collection 'Gone' does not exist.",
    counters: zeroCounters,
  });

  for (const action of ['Start', 'Stop']) {
    const unknown = await call(`${basePath}/nope/${action}`, { method: 'POST' });
    t.is(unknown.status, 404, action);
    t.is(unknown.json.detail, "Webhook publisher 'nope' does not exist.");
  }
});

const everyRoute: [string, string, unknown?][] = [
  ['GET', basePath],
  ['POST', basePath, feedConfig('http://127.0.0.1:1/x', { name: 'new' })],
  ['GET', `${basePath}/plant-feed`],
  ['PUT', `${basePath}/plant-feed`, feedConfig('http://127.0.0.1:1/x')],
  ['DELETE', `${basePath}/plant-feed`],
  ['POST', `${basePath}/plant-feed/Start`],
  ['POST', `${basePath}/plant-feed/Stop`],
];

for (const [license, detail] of [
  [
    standardLicense,
    'The webhook publisher needs the data relay feature of the server or enterprise edition; this installation is licensed for the standard edition.',
  ],
  [
    noLicense,
    'The webhook publisher needs the data relay feature of the server or enterprise edition; this installation is not licensed.',
  ],
] as const) {
  test(`${license.edition}: every publisher route is 403 feature-unavailable and nothing runs`, async (t) => {
    const receiver = await startReceiver(t);
    const { api, call, publishers, profileFile, tokens } = await setup(t, {
      license,
      profile: { ...baseProfile, publishers: { webhooks: [feedConfig(receiver.url)] } },
    });
    const before = await readFile(profileFile, 'utf8');
    for (const [method, path, body] of everyRoute) {
      const response = await call(path, { method, body });
      t.is(response.status, 403, `${method} ${path}`);
      t.is(response.headers.get('content-type'), 'application/problem+json');
      t.deepEqual(
        response.body,
        {
          type: 'urn:tagd:problem:feature-unavailable',
          title: 'Forbidden',
          status: 403,
          detail,
          instance: path,
          code: 'feature-unavailable',
        },
        `${method} ${path}`,
      );
    }
    // Permission comes first: a caller without it learns nothing about the license.
    const viewer = await call(basePath, { token: tokens.viewer });
    t.is(viewer.json.code, 'forbidden');
    t.is(await readFile(profileFile, 'utf8'), before, 'nothing was changed');
    t.like(publishers.get('plant-feed'), { status: 'Off' });
    t.regex(publishers.get('plant-feed')?.reason ?? '', /data relay feature is not licensed/);
    api.clock.advance(30_000);
    await sleep(50);
    t.is(receiver.received.length, 0, 'no publisher starts without the feature');
    // Collections are not a licensed feature.
    t.is((await call('/api/v2/Collections')).status, 200);
  });
}

test('the enterprise edition includes data relay too', async (t) => {
  const { call } = await setup(t, { license: enterpriseLicense });
  const response = await call(basePath);
  t.is(response.status, 200);
  t.deepEqual(response.body, []);
});

test('changes are audited with who and what; secrets never reach answers, logs or errors', async (t) => {
  const { api, call, responses } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  await call(basePath);
  await call(`${basePath}/plant-feed`);
  await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: feedConfig('********', {
      authentication: {
        mode: 'API key header',
        apiKeyHeaderName: 'X-Key',
        apiKeyHeaderValue: tokenSecret,
      },
    }),
  });
  // Errors that quote the request must not quote a secret either.
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  await call(basePath, {
    method: 'POST',
    body: feedConfig(`ftp://h/${urlSecret}`, {
      name: 'bad',
      authentication: { mode: 'x', bearerToken: tokenSecret },
    }),
  });
  // A receiver refusing the credential: the failure is logged, naming the status only.
  receiver.control.status = 401;
  const idleTimers = api.clock.pendingTimers();
  api.clock.advance(5000);
  // Each failed attempt leaves one retry wait on the clock; advancing past it sends the next.
  await until(
    () => receiver.received.length === 1 && api.clock.pendingTimers() === idleTimers + 1,
    'attempt 1 to fail',
  );
  api.clock.advance(1000);
  await until(
    () => receiver.received.length === 2 && api.clock.pendingTimers() === idleTimers + 1,
    'attempt 2 to fail',
  );
  api.clock.advance(2000);
  await until(() => receiver.received.length === 3, 'attempt 3');
  await until(
    () => api.logs.lines.some((line) => /delivery to the destination failed/.test(line.msg ?? '')),
    'the failure log line',
  );
  t.is(receiver.received[0]?.headers['x-key'], tokenSecret, 'the receiver did get the secret');
  const failed = await call(`${basePath}/plant-feed`);
  t.like(publisherState(failed), { status: 'Error' });
  await call(`${basePath}/plant-feed`, { method: 'DELETE' });

  const answers = responses.map((response) => JSON.stringify(response.body)).join('\n');
  const logs = api.logs.text();
  for (const secret of [urlSecret, tokenSecret, receiver.url]) {
    t.false(answers.includes(secret), `answers hold ${secret}`);
    t.false(logs.includes(secret), `logs hold ${secret}`);
  }
  t.true(logs.includes('likely wrong'), 'the 401 is logged as a likely wrong credential');

  const audit = api.logs.lines.filter((line) => line.component === 'audit' && line.event);
  t.deepEqual(
    audit
      .filter((line) => String(line.event).startsWith('webhook'))
      .map(({ event, publisher, username, msg }) => ({ event, publisher, username, msg })),
    [
      {
        event: 'webhook-publisher-created',
        publisher: 'plant-feed',
        username: 'admin',
        msg: 'profile changed',
      },
      {
        event: 'webhook-publisher-replaced',
        publisher: 'plant-feed',
        username: 'admin',
        msg: 'profile changed',
      },
      {
        event: 'webhook-publisher-deleted',
        publisher: 'plant-feed',
        username: 'admin',
        msg: 'profile changed',
      },
    ],
  );
});

test('start and stop are audited with the resulting status', async (t) => {
  const { api, call } = await setup(t);
  await call(basePath, {
    method: 'POST',
    body: feedConfig('http://127.0.0.1:1/x', { collections: ['Missing'] }),
  });
  await call(`${basePath}/plant-feed/Start`, { method: 'POST' });
  await call(`${basePath}/plant-feed/Stop`, { method: 'POST' });
  const lines = api.logs.lines
    .filter(
      (line) =>
        line.event === 'webhook-publisher-started' || line.event === 'webhook-publisher-stopped',
    )
    .map(({ event, publisher, username, status, reason, msg }) => ({
      event,
      publisher,
      username,
      status,
      reason,
      msg,
    }));
  t.deepEqual(lines, [
    {
      event: 'webhook-publisher-started',
      publisher: 'plant-feed',
      username: 'admin',
      status: 'Off',
      reason: "Collection 'Missing' does not exist.",
      msg: 'publisher start refused',
    },
    {
      event: 'webhook-publisher-stopped',
      publisher: 'plant-feed',
      username: 'admin',
      status: undefined,
      reason: undefined,
      msg: 'publisher stopped',
    },
  ]);
});

test('a kept (masked) credential cannot follow the destination to another origin', async (t) => {
  const { call, profile } = await setup(t);
  const receiver = await startReceiver(t);
  await call(basePath, { method: 'POST', body: feedConfig(receiver.url) });
  const body = {
    destinationUrl: 'http://attacker.invalid:9/steal',
    authentication: { mode: 'Bearer token', bearerToken: '********' },
    collections: ['Line1'],
  };
  const refused = await call(`${basePath}/plant-feed`, { method: 'PUT', body });
  t.is(refused.status, 400);
  t.deepEqual(refused.json.errors, [
    {
      path: 'authentication.bearerToken',
      message: 'Enter this credential again: the destination URL now points elsewhere.',
    },
  ]);
  t.is(profile.current().publishers.webhooks[0]?.destinationUrl, receiver.url, 'nothing saved');
  const sameOrigin = await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: { ...body, destinationUrl: `${receiver.url}/other-path` },
  });
  t.is(sameOrigin.status, 200, 'another path on the same origin keeps the credential');
  const reentered = await call(`${basePath}/plant-feed`, {
    method: 'PUT',
    body: { ...body, authentication: { mode: 'Bearer token', bearerToken: 'a new token' } },
  });
  t.is(reentered.status, 200, 'entering the credential again allows the move');
});

test("Send test delivers one batch now and answers the receiver's status; PublisherManage only, audited, no secret", async (t) => {
  const { api, call, responses, tokens } = await setup(t);
  const receiver = await startReceiver(t);
  // Off (Auto Connect off): the test works whether the publisher runs or not, and a running
  // publisher's interval (5 s on the manual clock) never ticks here.
  await call(basePath, {
    method: 'POST',
    body: feedConfig(receiver.url, { autoConnect: false }),
  });
  const tested = await call(`${basePath}/plant-feed/Test`, { method: 'POST' });
  t.is(tested.status, 200);
  t.like(tested.json, { ok: true, httpStatus: 200, attempts: 1, samples: 2 });
  t.true(typeof tested.json.durationMs === 'number');
  t.is(receiver.received.length, 1);
  t.deepEqual(receiver.received[0]?.body, line1Payload);
  t.is(receiver.received[0]?.headers.authorization, `Bearer ${tokenSecret}`);
  // The publisher itself is untouched: no delivery recorded, no counters.
  const after = await call(`${basePath}/plant-feed`);
  t.like(publisherState(after), { status: 'Off', counters: zeroCounters });
  t.is(publisherState(after).lastDelivery, undefined);

  // A refusing receiver: the answer names its status after one attempt (no retry waits).
  receiver.control.status = 403;
  const refused = await call(`${basePath}/plant-feed/Test`, { method: 'POST' });
  t.like(refused.json, { ok: false, httpStatus: 403, attempts: 1 });
  t.is(receiver.received.length, 2);

  for (const token of [tokens.operator, tokens.viewer]) {
    const denied = await api.request(`${basePath}/plant-feed/Test`, { method: 'POST', token });
    t.is(denied.status, 403);
  }
  t.is((await api.request(`${basePath}/plant-feed/Test`, { method: 'POST' })).status, 401);
  t.is((await call(`${basePath}/nope/Test`, { method: 'POST' })).status, 404);

  const audit = api.logs.lines
    .filter((line) => line.event === 'webhook-publisher-tested')
    .map(({ publisher, username, ok, httpStatus }) => ({ publisher, username, ok, httpStatus }));
  t.deepEqual(audit, [
    { publisher: 'plant-feed', username: 'admin', ok: true, httpStatus: 200 },
    { publisher: 'plant-feed', username: 'admin', ok: false, httpStatus: 403 },
  ]);
  const answers = responses.map((response) => JSON.stringify(response.body)).join('\n');
  const logs = api.logs.text();
  for (const secret of [urlSecret, tokenSecret]) {
    t.false(answers.includes(secret), `answers hold ${secret}`);
    t.false(logs.includes(secret), `logs hold ${secret}`);
  }
});
