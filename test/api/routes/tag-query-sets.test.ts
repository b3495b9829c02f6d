import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import type { HistoryBackend, LoggedSample } from '../../../src/history/history-backend.js';
import { HistoryService } from '../../../src/history/history-service.js';
import { createSqliteBackend } from '../../../src/history/sqlite-backend.js';
import { ProfileService } from '../../../src/profile/profile-service.js';
import { ProfileStore } from '../../../src/profile/profile-store.js';
import type { Sample, TagValue } from '../../../src/tags/sample.js';
import { type ApiHarness, type ApiResponse, startApi } from '../../helpers/api-harness.js';

const t0 = Date.UTC(2026, 0, 1);
const minute = 60_000;

function good(fullTagId: string, value: TagValue, at = t0): Sample {
  return { fullTagId, utcTimestamp: new Date(at).toISOString(), quality: 'Good', value };
}

const pressTemp = good('Line1/Press/Temperature', 81.5);
const pressSpeed = good('Line1/Press/Speed', 120);
const pumpFlow = good('Line2/Pump/Flow', 3.2);

interface Setup {
  api: ApiHarness;
  token: string;
  /** POST /api/v2/TagQuerySet as `token` (default: the Viewer's). */
  post(body: unknown, token?: string): Promise<ApiResponse>;
  /** GET the Delta of a set as `token` (default: the Viewer's). */
  delta(id: string, token?: string): Promise<ApiResponse>;
}

/**
 * The API with three tags and a Viewer's token. `queries`: the profile's `queries` section (then
 * the API gets a real profile service holding it).
 */
async function setup(t: ExecutionContext, queries?: Record<string, number>): Promise<Setup> {
  const api = await startApi(
    t,
    queries === undefined
      ? {}
      : {
          deps: async (base) => {
            const file = join(base.stateDir, 'profile.json');
            await writeFile(file, JSON.stringify({ queries }));
            const store = new ProfileStore({ file, secretBox: base.secretBox });
            return { profile: new ProfileService(store, await store.load(), base.audit) };
          },
        },
  );
  api.store.write([pressTemp, pressSpeed, pumpFlow]);
  const token = await api.serviceToken('hmi', ['Viewers']);
  return {
    api,
    token,
    post: (body, as = token) =>
      api.request('/api/v2/TagQuerySet', { method: 'POST', token: as, body }),
    delta: (id, as = token) =>
      api.request(`/api/v2/TagQuerySet/Delta/${encodeURIComponent(id)}`, { token: as }),
  };
}

/** Creates a set and returns its id, failing the test when the POST does not succeed. */
async function createSet(t: ExecutionContext, s: Setup, bindings: unknown[], token?: string) {
  const response = await s.post({ bindings }, token);
  t.is(response.status, 200, JSON.stringify(response.body));
  return response.json.srcSetId as string;
}

function local(source: string) {
  return { source, store: 'Local' };
}

function problem(status: number, code: string, detail: string, instance: string, extra = {}) {
  const titles: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    409: 'Conflict',
    413: 'Content Too Large',
    429: 'Too Many Requests',
  };
  return {
    type: `urn:tagd:problem:${code}`,
    title: titles[status],
    status,
    detail,
    instance,
    code,
    ...extra,
  };
}

function missingSet(id: string) {
  return problem(
    404,
    'not-found',
    `Query set '${id}' does not exist or has expired (a set expires 10 minutes after its last poll).`,
    `/api/v2/TagQuerySet/Delta/${id}`,
  );
}

test('POST answers the current sample of every tag each binding matches, with its binding index', async (t) => {
  const s = await setup(t);
  const response = await s.post({
    bindings: [local('Line1/Press/*'), local('Line2/Pump/Flow'), local('**/Temperature')],
  });
  t.is(response.status, 200);
  t.regex(
    response.json.srcSetId as string,
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  t.deepEqual(response.body, {
    srcSetId: response.json.srcSetId,
    values: [
      { ...pressTemp, binding: 0 },
      { ...pressSpeed, binding: 0 },
      { ...pumpFlow, binding: 1 },
      { ...pressTemp, binding: 2 },
    ],
  });
});

test('a signed-in Viewer creates a set too; every sample field is carried', async (t) => {
  const s = await setup(t);
  await s.api.addUser('viewer', ['Viewers']);
  const token = await s.api.signIn('viewer');
  const unavailable: Sample = {
    fullTagId: 'Line3/Drive/Current',
    utcTimestamp: '2026-01-01T00:00:05.000Z',
    quality: 'Unavailable',
    reason: 'Disconnected',
    message: 'Connection lost.',
    metadata: { unit: 'A' },
  };
  s.api.store.write([unavailable]);
  const response = await s.post({ bindings: [local('Line3/**')] }, token);
  t.is(response.status, 200);
  t.deepEqual(response.json.values, [{ ...unavailable, binding: 0 }]);
});

test('a source naming no existing tag contributes nothing now and arrives through Delta once it exists', async (t) => {
  const s = await setup(t);
  const response = await s.post({ bindings: [local('Line9/Later/Tag'), local('Line2/**')] });
  t.is(response.status, 200);
  t.deepEqual(response.json.values, [{ ...pumpFlow, binding: 1 }]);
  const id = response.json.srcSetId as string;
  const later = good('Line9/Later/Tag', 7, t0 + 1_000);
  s.api.store.write([later]);
  const delta = await s.delta(id);
  t.is(delta.status, 200);
  t.deepEqual(delta.body, { srcSetId: id, values: [{ ...later, binding: 0 }] });
});

test('Delta: nothing changed answers an empty list', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [] });
  // Writing the very same sample again is not a change either.
  s.api.store.write([{ ...pressTemp }]);
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [] });
});

test('Delta: one changed tag answers exactly that sample, once', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('Line1/**'), local('Line2/Pump/Flow')]);
  const changed = good('Line1/Press/Speed', 125, t0 + 1_000);
  s.api.store.write([changed]);
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [{ ...changed, binding: 0 }] });
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [] });
});

test('Delta: a change of timestamp alone, or of quality alone, counts', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  const sameValueLater = good('Line1/Press/Temperature', 81.5, t0 + 1_000);
  const stale: Sample = { ...pumpFlow, quality: 'Stale', reason: 'NoUpdate' };
  s.api.store.write([sameValueLater, stale]);
  t.deepEqual((await s.delta(id)).json.values, [
    { ...sameValueLater, binding: 0 },
    { ...stale, binding: 0 },
  ]);
});

test('Delta: a tag appearing later under a pattern shows up', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('Line1/*/Temperature')]);
  const oven = good('Line1/Oven/Temperature', 240, t0 + 2_000);
  const notMatching = good('Line1/Oven/Humidity', 12, t0 + 2_000);
  s.api.store.write([oven, notMatching]);
  t.deepEqual((await s.delta(id)).json.values, [{ ...oven, binding: 0 }]);
});

test('Delta: changes accumulate between polls, the latest sample of each tag is answered', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  s.api.store.write([good('Line1/Press/Speed', 121, t0 + 1_000)]);
  const latest = good('Line1/Press/Speed', 122, t0 + 2_000);
  s.api.store.write([latest]);
  t.deepEqual((await s.delta(id)).json.values, [{ ...latest, binding: 0 }]);
});

test('srcSetId replaces the set’s bindings under the same id, and Delta follows the new ones', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('Line1/**')]);
  const replaced = await s.post({ srcSetId: id, bindings: [local('Line2/**')] });
  t.is(replaced.status, 200);
  t.deepEqual(replaced.body, { srcSetId: id, values: [{ ...pumpFlow, binding: 0 }] });
  const flow = good('Line2/Pump/Flow', 3.3, t0 + 1_000);
  s.api.store.write([good('Line1/Press/Speed', 1, t0 + 1_000), flow]);
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [{ ...flow, binding: 0 }] });
});

test('srcSetId of an unknown set is 404', async (t) => {
  const s = await setup(t);
  const response = await s.post({ srcSetId: 'no-such-set', bindings: [local('**')] });
  t.is(response.status, 404);
  t.deepEqual(response.body, {
    ...missingSet('no-such-set'),
    instance: '/api/v2/TagQuerySet',
  });
});

test('another account’s set is 404, for Delta and for replacement, and stays intact', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('Line1/**')]);
  const other = await s.api.serviceToken('intruder', ['Operators']);
  const delta = await s.delta(id, other);
  t.is(delta.status, 404);
  t.deepEqual(delta.body, missingSet(id));
  const replace = await s.post({ srcSetId: id, bindings: [local('**')] }, other);
  t.is(replace.status, 404);
  t.is(replace.json.detail, missingSet(id).detail);
  // The owner's set was neither replaced nor polled by those attempts.
  const changed = good('Line1/Press/Speed', 1, t0 + 1_000);
  s.api.store.write([changed, good('Line2/Pump/Flow', 1, t0 + 1_000)]);
  t.deepEqual((await s.delta(id)).json.values, [{ ...changed, binding: 0 }]);
});

test('a set expires 10 minutes after its last poll; a poll before that extends it', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  s.api.clock.advance(9 * minute + 59_000);
  t.is((await s.delta(id)).status, 200);
  s.api.clock.advance(9 * minute + 59_000);
  t.is((await s.delta(id)).status, 200);
  s.api.clock.advance(10 * minute);
  const expired = await s.delta(id);
  t.is(expired.status, 404);
  t.deepEqual(expired.body, missingSet(id));
});

test('replacing a set counts as a poll', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  s.api.clock.advance(9 * minute);
  t.is((await s.post({ srcSetId: id, bindings: [local('Line1/**')] })).status, 200);
  s.api.clock.advance(9 * minute);
  t.is((await s.delta(id)).status, 200);
});

test('an account holds at most 100 sets: the 101st is 409 limit-reached; others are not affected', async (t) => {
  const s = await setup(t);
  for (let i = 0; i < 100; i++) await createSet(t, s, [local('Line2/Pump/Flow')]);
  const refused = await s.post({ bindings: [local('**')] });
  t.is(refused.status, 409);
  t.deepEqual(
    refused.body,
    problem(
      409,
      'limit-reached',
      'This account already holds 100 query sets, the most allowed. Reuse one by sending its ' +
        'srcSetId, or let unused ones expire (10 minutes after their last poll).',
      '/api/v2/TagQuerySet',
    ),
  );
  const other = await s.api.serviceToken('other', ['Viewers']);
  await createSet(t, s, [local('**')], other);
  // Once they expire, the account may create sets again.
  s.api.clock.advance(10 * minute);
  await createSet(t, s, [local('**')]);
});

test('at most 1,000 bindings: 1,000 are accepted, 1,001 are a 400 naming bindings', async (t) => {
  const s = await setup(t);
  const bindings = Array.from({ length: 1_000 }, (_, i) => local(`Line1/Press/T${i}`));
  const accepted = await s.post({ bindings });
  t.is(accepted.status, 200);
  t.deepEqual(accepted.json.values, []);
  const refused = await s.post({ bindings: [...bindings, local('Line1/**')] });
  t.is(refused.status, 400);
  t.deepEqual(
    refused.body,
    problem(400, 'validation-failed', 'The request body is invalid.', '/api/v2/TagQuerySet', {
      errors: [{ path: 'bindings', message: 'At most 1,000 bindings per set.' }],
    }),
  );
});

test('at most 100,000 values per response: POST refuses more, Delta pages', async (t) => {
  const s = await setup(t);
  const at = t0 + 1_000;
  const big = Array.from({ length: 100_000 }, (_, i) => good(`Big/G${i >> 10}/T${i}`, i, at));
  s.api.store.write(big);

  const exact = await s.post({ bindings: [local('Big/**')] });
  t.is(exact.status, 200);
  const values = exact.json.values as Sample[];
  t.is(values.length, 100_000);
  t.deepEqual(values[99_999], { ...big[99_999], binding: 0 });

  // Every tag changes and one more appears: 100,001 changes, answered over two polls.
  s.api.store.write([
    ...big.map((sample) => ({ ...sample, value: (sample.value as number) + 1 })),
    good('Big/Extra', -1, at),
  ]);
  const id = exact.json.srcSetId as string;
  const first = await s.delta(id);
  t.is(first.status, 200);
  t.is(first.json.truncated, true);
  t.is((first.json.values as Sample[]).length, 100_000);
  t.deepEqual((first.json.values as Sample[])[0], { ...big[0], value: 1, binding: 0 });
  const second = await s.delta(id);
  t.deepEqual(second.body, {
    srcSetId: id,
    values: [{ ...good('Big/Extra', -1, at), binding: 0 }],
  });

  const tooMany = await s.post({ bindings: [local('**')] });
  t.is(tooMany.status, 400);
  const message =
    'The bindings match 100,004 values; a response carries at most 100,000. Narrow the sources.';
  t.deepEqual(
    tooMany.body,
    problem(400, 'validation-failed', message, '/api/v2/TagQuerySet', {
      errors: [{ path: 'bindings', message }],
    }),
  );
  // Overlapping bindings count each value they answer.
  const overlapping = await s.post({ bindings: [local('Big/**'), local('Line1/Press/Speed')] });
  t.is(overlapping.status, 400);
  t.regex(overlapping.json.detail as string, /^The bindings match 100,002 values;/);
});

test('Logged bindings without a time range are a 400 naming each missing field', async (t) => {
  const s = await setup(t);
  const response = await s.post({
    bindings: [local('Line1/**'), { source: 'Line1/**', store: 'Logged' }],
  });
  t.is(response.status, 400);
  t.deepEqual(
    response.body,
    problem(400, 'validation-failed', 'The request body is invalid.', '/api/v2/TagQuerySet', {
      errors: [
        { path: 'bindings[1].timeRangeStart', message: 'Required for a Logged binding.' },
        { path: 'bindings[1].timeRangeStop', message: 'Required for a Logged binding.' },
      ],
    }),
  );
});

test('invalid binding fields are all listed with their paths', async (t) => {
  const s = await setup(t);
  const response = await s.post({
    bindings: [
      {
        source: 'Line1/**',
        store: 'Logged',
        timeRangeStart: 'yesterday',
        timeRangeStop: '2026-01-31T08:00:00',
        seriesMode: 'Aggregated',
        aggregationWindow: 'P1M',
        aggregationFunction: 'Median',
      },
      { source: 'Line1//x', store: 'Remote' },
      { source: 'Line1/**', store: 'Local', colour: 'red' },
    ],
  });
  t.is(response.status, 400);
  const timeHelp =
    'Must be `now`, `now-<n><s|m|h|d>` (e.g. `now-15m`) or an ISO 8601 timestamp with zone ' +
    '(e.g. `2026-01-31T08:00:00Z`).';
  t.deepEqual(response.json.errors, [
    { path: 'bindings[0].timeRangeStart', message: timeHelp },
    { path: 'bindings[0].timeRangeStop', message: timeHelp },
    {
      path: 'bindings[0].aggregationWindow',
      message: 'Must not use years or months (their length varies); use days or weeks.',
    },
    {
      path: 'bindings[0].aggregationFunction',
      message: 'Invalid option: expected one of "Avg"|"Min"|"Max"|"Sum"|"Count"|"First"|"Last"',
    },
    {
      path: 'bindings[1].source',
      message:
        'Invalid tag path or pattern: it has an empty segment (leading, trailing or double slash).',
    },
    { path: 'bindings[1].store', message: 'Invalid option: expected one of "Local"|"Logged"' },
    { path: 'bindings[2].colour', message: "Unknown key 'colour'." },
  ]);
});

test('aggregation and range fields must fit the store and series mode', async (t) => {
  const s = await setup(t);
  const range = { timeRangeStart: 'now-1h', timeRangeStop: 'now' };
  const response = await s.post({
    bindings: [
      { source: 'A/**', store: 'Local', timeRangeStart: 'now-1h', seriesMode: 'Aggregated' },
      { source: 'A/**', store: 'Logged', ...range, seriesMode: 'Aggregated' },
      { source: 'A/**', store: 'Logged', ...range, aggregationWindow: '5m' },
      { source: 'A/**', store: 'Logged', ...range, seriesMode: 'Raw', aggregationFunction: 'Avg' },
    ],
  });
  t.is(response.status, 400);
  t.deepEqual(response.json.errors, [
    { path: 'bindings[0].timeRangeStart', message: 'Applies only to Logged bindings.' },
    { path: 'bindings[0].seriesMode', message: 'Aggregated applies only to Logged bindings.' },
    { path: 'bindings[0].aggregationWindow', message: 'Required when seriesMode is Aggregated.' },
    { path: 'bindings[0].aggregationFunction', message: 'Required when seriesMode is Aggregated.' },
    { path: 'bindings[1].aggregationWindow', message: 'Required when seriesMode is Aggregated.' },
    { path: 'bindings[1].aggregationFunction', message: 'Required when seriesMode is Aggregated.' },
    {
      path: 'bindings[2].aggregationWindow',
      message: 'Applies only when seriesMode is Aggregated.',
    },
    {
      path: 'bindings[3].aggregationFunction',
      message: 'Applies only when seriesMode is Aggregated.',
    },
  ]);
});

test('a range whose stop lies before its start is a 400, relative ends resolved at now', async (t) => {
  const s = await setup(t);
  const nowIso = new Date(s.api.clock.now()).toISOString();
  const response = await s.post({
    bindings: [
      { source: 'A', store: 'Logged', timeRangeStart: 'now-5m', timeRangeStop: 'now-10m' },
      {
        source: 'A',
        store: 'Logged',
        timeRangeStart: 'now',
        timeRangeStop: '2020-01-01T00:00:00Z',
      },
      { source: 'A', store: 'Logged', timeRangeStart: nowIso, timeRangeStop: 'now' },
    ],
  });
  t.is(response.status, 400);
  t.deepEqual(response.json.errors, [
    { path: 'bindings[0].timeRangeStop', message: 'Must not be before timeRangeStart.' },
    { path: 'bindings[1].timeRangeStop', message: 'Must not be before timeRangeStart.' },
  ]);
});

test('a valid Logged binding is 409 history-not-configured while no history store exists', async (t) => {
  const s = await setup(t);
  const response = await s.post({
    bindings: [
      local('Line1/**'),
      {
        source: 'Line1/**',
        store: 'Logged',
        timeRangeStart: 'now-15m',
        timeRangeStop: 'now',
        seriesMode: 'Aggregated',
        aggregationWindow: 'PT1M',
        aggregationFunction: 'Avg',
      },
      {
        source: 'Line2/**',
        store: 'Logged',
        timeRangeStart: '2026-01-01T00:00:00Z',
        timeRangeStop: 'now',
      },
    ],
  });
  t.is(response.status, 409);
  t.deepEqual(
    response.body,
    problem(
      409,
      'history-not-configured',
      'bindings[1] uses store Logged, but historical data is available only when a ' +
        'time-series database is configured in the profile; without one only realtime data ' +
        'is available (use store Local).',
      '/api/v2/TagQuerySet',
    ),
  );
  // Nothing was created: the account's allowance is untouched and no set id leaked.
  t.false('srcSetId' in response.json);
});

test('a request body without bindings, or with an empty list, is a 400', async (t) => {
  const s = await setup(t);
  const missing = await s.post({});
  t.is(missing.status, 400);
  t.deepEqual(missing.json.errors, [
    { path: 'bindings', message: 'Invalid input: expected array, received undefined' },
  ]);
  const empty = await s.post({ bindings: [] });
  t.deepEqual(empty.json.errors, [
    { path: 'bindings', message: 'At least one binding is required.' },
  ]);
});

test('a Delta of an unknown set is 404', async (t) => {
  const s = await setup(t);
  const response = await s.delta('7f1c3a52-2b1e-4d7e-9a39-2f1d5f0c9b11');
  t.is(response.status, 404);
  t.deepEqual(response.body, missingSet('7f1c3a52-2b1e-4d7e-9a39-2f1d5f0c9b11'));
});

/** Writes `count` Good tags `<prefix>/T<i>` and returns them. */
function writeTags(s: Setup, prefix: string, count: number, at = t0): Sample[] {
  const samples = Array.from({ length: count }, (_, i) => good(`${prefix}/T${i}`, i, at));
  s.api.store.write(samples);
  return samples;
}

function matchesDetail(tags: number, max = '1,000,000') {
  return (
    `The bindings need more than ${max} tag matches, the most one request may evaluate ` +
    '(profile queries.maxMatchesPerRequest): each distinct pattern is compared with every tag ' +
    `of the store (${tags.toLocaleString('en')} now), and each Local binding counts every tag ` +
    'it matches. Use fewer or narrower bindings.'
  );
}

test('bindings needing over 1,000,000 tag matches are 413 query-too-large naming the limit; repeats of a source are matched once', async (t) => {
  const s = await setup(t);
  writeTags(s, 'Many', 2_000);
  // 1,000 × `**` over 2,003 tags would be 2,003,000 values: refused on the work, before the
  // values are even counted.
  const wide = await s.post({ bindings: Array.from({ length: 1_000 }, () => local('**')) });
  t.is(wide.status, 413);
  t.deepEqual(
    wide.body,
    problem(413, 'query-too-large', matchesDetail(2_003), '/api/v2/TagQuerySet'),
  );
  // 1,000 distinct patterns matching nothing still compare every tag: 2 million comparisons.
  const scans = await s.post({
    bindings: Array.from({ length: 1_000 }, (_, i) => local(`Nowhere${i}/**`)),
  });
  t.is(scans.status, 413);
  t.is(scans.json.code, 'query-too-large');
  // 1,000 × `**` over 100 tags: 100,000 values, the source matched once.
  const few = await setup(t);
  writeTags(few, 'Few', 97);
  const accepted = await few.post({ bindings: Array.from({ length: 1_000 }, () => local('**')) });
  t.is(accepted.status, 200);
  t.is((accepted.json.values as unknown[]).length, 100_000);
});

test('the limits come from the profile: maxMatchesPerRequest applies to every Delta poll as the store grows', async (t) => {
  const s = await setup(t, { maxMatchesPerRequest: 1_000 });
  const id = await createSet(t, s, [local('**')]);
  writeTags(s, 'Many', 600);
  const refused = await s.delta(id);
  t.is(refused.status, 413);
  t.deepEqual(
    refused.body,
    problem(413, 'query-too-large', matchesDetail(603, '1,000'), `/api/v2/TagQuerySet/Delta/${id}`),
  );
  // Replaced by narrower bindings, the set works again.
  t.is((await s.post({ srcSetId: id, bindings: [local('Line1/**')] })).status, 200);
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [] });
});

function accountDetail(entries: string, max: string) {
  return (
    `The query sets of this account would hold ${entries} Delta entries (one per tag that ` +
    'each distinct Local source of a set matches); an account holds at most ' +
    `${max} (profile queries.maxDeltaEntriesPerAccount). Use fewer or narrower sources, ` +
    'reuse a set by sending its srcSetId, or retry once unused sets expire (10 minutes after ' +
    'their last poll).'
  );
}

test('Delta entries over the account share are 429 query-capacity-reached with Retry-After; all accounts together have a bound too', async (t) => {
  const s = await setup(t, { maxDeltaEntriesPerAccount: 1_000, maxDeltaEntries: 2_000 });
  writeTags(s, 'Many', 600);
  await createSet(t, s, [local('Many/**')]);
  s.api.clock.advance(3 * minute);
  // 100 bindings of one source hold its 600 entries once.
  const repeated = await s.post({
    bindings: Array.from({ length: 100 }, () => local('Many/**')),
  });
  t.is(repeated.status, 429);
  t.is(repeated.headers.get('retry-after'), String(7 * 60), 'the first set expires in 7 minutes');
  t.deepEqual(
    repeated.body,
    problem(429, 'query-capacity-reached', accountDetail('1,200', '1,000'), '/api/v2/TagQuerySet'),
  );
  // A smaller set still fits in the share.
  await createSet(t, s, [local('Line1/**')]);

  const other = await s.api.serviceToken('other', ['Viewers']);
  const third = await s.api.serviceToken('third', ['Viewers']);
  const fourth = await s.api.serviceToken('fourth', ['Viewers']);
  await createSet(t, s, [local('Many/**')], other);
  await createSet(t, s, [local('Many/**'), local('Many/**')], third);
  // 602 + 600 + 600 held: another 600 would pass the 2,000 of all accounts together.
  const full = await s.post({ bindings: [local('Many/**')] }, fourth);
  t.is(full.status, 429);
  t.is(full.headers.get('retry-after'), String(7 * 60));
  t.deepEqual(
    full.body,
    problem(
      429,
      'query-capacity-reached',
      'The query sets of all accounts together hold the most Delta entries the gateway allows ' +
        '(2,000, profile queries.maxDeltaEntries); this set would need 600. Retry once unused ' +
        'sets expire (10 minutes after their last poll), or use fewer or narrower sources.',
      '/api/v2/TagQuerySet',
    ),
  );
  // One set alone over the share can never fit: 413, not a retry.
  writeTags(s, 'More', 500);
  const alone = await s.post({ bindings: [local('Many/**'), local('More/**')] }, fourth);
  t.is(alone.status, 413);
  t.is(
    alone.json.detail,
    'This query set would hold 1,100 Delta entries (one per tag that each distinct Local ' +
      'source matches); the query sets of one account hold at most 1,000 (profile ' +
      'queries.maxDeltaEntriesPerAccount). Use fewer or narrower sources.',
  );
  // Once the Viewer's first set expires, its entries are free for anyone.
  s.api.clock.advance(7 * minute);
  await createSet(t, s, [local('Many/**')], fourth);
});

test('a Delta poll that would take the account over its share is 429 and changes nothing; with room again it answers what it held back', async (t) => {
  const s = await setup(t, { maxDeltaEntriesPerAccount: 1_000 });
  const many = writeTags(s, 'Many', 500);
  const id = await createSet(t, s, [local('Many/**')]);
  s.api.clock.advance(minute);
  const second = await createSet(t, s, [local('Many/**')]);
  // A new tag and a change: the poll would hold 1,001 entries.
  const newcomer = good('Many/New', 1, t0 + 1_000);
  const changed = { ...many[0], value: -1 } as Sample;
  s.api.store.write([changed, newcomer]);
  const refused = await s.delta(id);
  t.is(refused.status, 429);
  t.is(refused.json.detail, accountDetail('1,001', '1,000'));
  t.is(refused.headers.get('retry-after'), String(10 * 60), 'the other set expires in 10 minutes');
  // The other set's poll needs the same room (its own new entry), so it is refused too.
  t.is((await s.delta(second)).status, 429);
  s.api.clock.advance(9 * minute);
  t.is((await s.delta(id)).status, 429, 'polls keep the set alive');
  s.api.clock.advance(minute);
  // The second set expired: the first answers the change and the tag it held back, once.
  const delta = await s.delta(id);
  t.deepEqual(delta.body, {
    srcSetId: id,
    values: [
      { ...changed, binding: 0 },
      { ...newcomer, binding: 0 },
    ],
  });
  t.deepEqual((await s.delta(id)).body, { srcSetId: id, values: [] });
});

test('both routes need a token (401) and TagView (403)', async (t) => {
  const s = await setup(t);
  const id = await createSet(t, s, [local('**')]);
  const none = await s.api.serviceToken('none', []);
  for (const request of [() => s.post({ bindings: [local('**')] }, ''), () => s.delta(id, '')]) {
    const response = await request();
    t.is(response.status, 401);
    t.is(response.json.code, 'unauthorized');
    t.is(response.headers.get('www-authenticate'), 'Bearer realm="tagd"');
  }
  const post = await s.post({ bindings: [local('**')] }, none);
  t.deepEqual(
    post.body,
    problem(403, 'forbidden', 'This route needs the TagView permission.', '/api/v2/TagQuerySet'),
  );
  const delta = await s.delta(id, none);
  t.deepEqual(
    delta.body,
    problem(
      403,
      'forbidden',
      'This route needs the TagView permission.',
      `/api/v2/TagQuerySet/Delta/${id}`,
    ),
  );
});

// ---- Logged bindings, with a sqlite history ----

interface HistorySetup extends Setup {
  backend: HistoryBackend;
  history: HistoryService;
  /** A whole minute an hour before the harness clock's start: the logged data's origin. */
  base: number;
}

async function historySetup(t: ExecutionContext): Promise<HistorySetup> {
  let backend: HistoryBackend | undefined;
  let history: HistoryService | undefined;
  const api = await startApi(t, {
    deps: async ({ store, clock, logs, stateDir }) => {
      backend = createSqliteBackend({ file: join(stateDir, 'history.db'), logger: logs.logger });
      history = new HistoryService({
        backend,
        store,
        config: {
          backend: 'sqlite',
          file: 'history.db',
          synchronous: 'normal',
          retentionDays: 3650,
          bufferLimit: 100_000,
          log: [{ source: 'Live/**', mode: 'onChange' }],
        },
        clock,
        logger: logs.logger,
      });
      await history.start();
      return { history };
    },
  });
  t.teardown(() => history?.stop());
  api.store.write([pressTemp, pressSpeed, pumpFlow]);
  const token = await api.serviceToken('hmi', ['Viewers']);
  return {
    api,
    token,
    backend: backend as HistoryBackend,
    history: history as HistoryService,
    base: Math.floor(api.clock.now() / minute) * minute - 60 * minute,
    post: (body, as = token) =>
      api.request('/api/v2/TagQuerySet', { method: 'POST', token: as, body }),
    delta: (id, as = token) =>
      api.request(`/api/v2/TagQuerySet/Delta/${encodeURIComponent(id)}`, { token: as }),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

function loggedGood(fullTagId: string, epochMs: number, value: TagValue): LoggedSample {
  return { fullTagId, epochMs, quality: 'Good', value };
}

function logged(source: string, start: string, stop: string, extra: Record<string, string> = {}) {
  return { source, store: 'Logged', timeRangeStart: start, timeRangeStop: stop, ...extra };
}

test('Logged Raw: the samples in the range, by tag then time, with their stored quality', async (t) => {
  const s = await historySetup(t);
  const { base } = s;
  await s.backend.append([
    loggedGood('Hist/b', base + 1_000, 'on'),
    loggedGood('Hist/a', base + 2_000, 1.5),
    loggedGood('Hist/a', base + 1_000, 1),
    { fullTagId: 'Hist/a', epochMs: base + 3_000, quality: 'Bad', reason: 'DecodeError' },
    loggedGood('Hist/a', base + 9_000, 9), // after the range
    loggedGood('Other/x', base + 1_000, 0),
  ]);
  const response = await s.post({
    bindings: [local('Line2/**'), logged('Hist/**', iso(base), iso(base + 3_000))],
  });
  t.is(response.status, 200, JSON.stringify(response.body));
  t.deepEqual(response.json.values, [
    { ...pumpFlow, binding: 0 },
    { fullTagId: 'Hist/a', utcTimestamp: iso(base + 1_000), quality: 'Good', value: 1, binding: 1 },
    {
      fullTagId: 'Hist/a',
      utcTimestamp: iso(base + 2_000),
      quality: 'Good',
      value: 1.5,
      binding: 1,
    },
    {
      fullTagId: 'Hist/a',
      utcTimestamp: iso(base + 3_000),
      quality: 'Bad',
      reason: 'DecodeError',
      binding: 1,
    },
    {
      fullTagId: 'Hist/b',
      utcTimestamp: iso(base + 1_000),
      quality: 'Good',
      value: 'on',
      binding: 1,
    },
  ]);
});

test('Logged Aggregated: one value per UTC-aligned window, stamped with the window start', async (t) => {
  const s = await historySetup(t);
  const { base } = s;
  await s.backend.append([
    loggedGood('Agg/a', base + 10_000, 2),
    loggedGood('Agg/a', base + 50_000, 4),
    loggedGood('Agg/a', base + minute + 5_000, 10),
    { fullTagId: 'Agg/a', epochMs: base + minute + 6_000, quality: 'Bad' },
    { fullTagId: 'Agg/a', epochMs: base + 2 * minute + 1, quality: 'Unavailable' },
  ]);
  // Starts mid-window: the first window starts before the range, only in-range samples count.
  const range = [iso(base + 30_000), iso(base + 3 * minute)] as const;
  const post = (fn: string) =>
    s.post({
      bindings: [
        logged('Agg/a', ...range, {
          seriesMode: 'Aggregated',
          aggregationWindow: '1m',
          aggregationFunction: fn,
        }),
      ],
    });
  const avg = await post('Avg');
  t.is(avg.status, 200, JSON.stringify(avg.body));
  t.deepEqual(avg.json.values, [
    { fullTagId: 'Agg/a', utcTimestamp: iso(base), quality: 'Good', value: 4, binding: 0 },
    {
      fullTagId: 'Agg/a',
      utcTimestamp: iso(base + minute),
      quality: 'Good',
      value: 10,
      binding: 0,
    },
    {
      fullTagId: 'Agg/a',
      utcTimestamp: iso(base + 2 * minute),
      quality: 'Bad',
      message: 'No Good or Stale value in this window.',
      binding: 0,
    },
  ]);
  const count = await post('Count');
  t.deepEqual(
    (count.json.values as Sample[]).map((v) => [v.quality, v.value]),
    [
      ['Good', 1],
      ['Good', 1],
      ['Good', 0],
    ],
  );
});

test('Logged: a range over 100,000 values is a 400 that says how many it would return', async (t) => {
  const s = await historySetup(t);
  const { base } = s;
  const rows = Array.from({ length: 100_001 }, (_, i) => loggedGood('Many/a', base + i, i));
  await s.backend.append(rows);
  const response = await s.post({
    bindings: [local('Line1/**'), logged('Many/**', iso(base), iso(base + 200_000))],
  });
  t.is(response.status, 400);
  const message =
    'The bindings match 100,003 values; a response carries at most 100,000. Narrow the ' +
    'sources, shorten the time ranges, or aggregate over longer windows.';
  t.deepEqual(
    response.body,
    problem(400, 'validation-failed', message, '/api/v2/TagQuerySet', {
      errors: [{ path: 'bindings', message }],
    }),
  );
  // Aggregated, the same range fits.
  const aggregated = await s.post({
    bindings: [
      logged('Many/**', iso(base), iso(base + 200_000), {
        seriesMode: 'Aggregated',
        aggregationWindow: '10s',
        aggregationFunction: 'Max',
      }),
    ],
  });
  t.is(aggregated.status, 200);
  t.is((aggregated.json.values as Sample[]).length, 11);
});

test('Delta on Logged Raw: the samples logged since the previous poll, in the sliding range', async (t) => {
  const s = await historySetup(t);
  const now = s.api.clock.now();
  await s.backend.append([loggedGood('Delta/a', now - 10 * minute, 1)]);
  const id = await createSet(t, s, [logged('Delta/**', 'now-1h', 'now')]);
  // Appended after the POST: a late sample from the past, a new one, one outside the range.
  await s.backend.append([
    loggedGood('Delta/a', now - 20 * minute, 0),
    loggedGood('Delta/b', now - minute, 5),
    loggedGood('Delta/a', now - 2 * 3_600_000, -1),
  ]);
  const first = await s.delta(id);
  t.is(first.status, 200);
  t.deepEqual(
    (first.json.values as Sample[]).map((v) => [v.fullTagId, v.value]),
    [
      ['Delta/a', 0],
      ['Delta/b', 5],
    ],
  );
  t.deepEqual((await s.delta(id)).json.values, [], 'nothing twice');
  // The range slides with now: five minutes later, a sample logged then is in range.
  s.api.clock.advance(5 * minute);
  await s.backend.append([loggedGood('Delta/a', s.api.clock.now() - 1_000, 2)]);
  const later = await s.delta(id);
  t.deepEqual(
    (later.json.values as (Sample & { binding: number })[]).map((v) => [v.value, v.binding]),
    [[2, 0]],
  );
});

test('Delta on Logged Raw: two polls of one set at the same moment answer each sample once between them', async (t) => {
  const s = await historySetup(t);
  const now = s.api.clock.now();
  const id = await createSet(t, s, [logged('Twice/**', 'now-1h', 'now')]);
  // A database that takes a while to answer, so the two polls overlap.
  const raw = s.history.raw.bind(s.history);
  s.history.raw = async (query) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return raw(query);
  };
  await s.backend.append(
    Array.from({ length: 50 }, (_, i) => loggedGood('Twice/a', now - 30 * minute + i, i)),
  );
  const [one, two] = await Promise.all([s.delta(id), s.delta(id)]);
  const values = [...(one.json.values as Sample[]), ...(two.json.values as Sample[])].map(
    (v) => v.value,
  );
  t.deepEqual(
    values,
    Array.from({ length: 50 }, (_, i) => i),
  );
});

test('Delta on Logged Raw: a sample stamped ahead of the gateway clock comes once the range reaches it', async (t) => {
  const s = await historySetup(t);
  const now = s.api.clock.now();
  // Logged before the set exists, stamped by a device whose clock runs 5 s ahead.
  await s.backend.append([loggedGood('Ahead/a', now + 5_000, 'ahead')]);
  const id = await createSet(t, s, [logged('Ahead/**', 'now-1h', 'now')]);
  t.deepEqual((await s.delta(id)).json.values, [], 'not in the range yet');
  s.api.clock.advance(10_000);
  t.deepEqual((await s.delta(id)).json.values, [
    {
      fullTagId: 'Ahead/a',
      utcTimestamp: iso(now + 5_000),
      quality: 'Good',
      value: 'ahead',
      binding: 0,
    },
  ]);
  t.deepEqual((await s.delta(id)).json.values, [], 'nothing twice');
});

test('Delta on Logged Aggregated: the windows that received samples, recomputed', async (t) => {
  const s = await historySetup(t);
  const { base } = s;
  await s.backend.append([
    loggedGood('Win/a', base + 1_000, 1),
    loggedGood('Win/a', base + minute + 1_000, 10),
  ]);
  const id = await createSet(t, s, [
    logged('Win/a', iso(base), iso(base + 10 * minute), {
      seriesMode: 'Aggregated',
      aggregationWindow: 'PT1M',
      aggregationFunction: 'Sum',
    }),
  ]);
  await s.backend.append([loggedGood('Win/a', base + 2_000, 2)]);
  const delta = await s.delta(id);
  t.deepEqual(delta.json.values, [
    { fullTagId: 'Win/a', utcTimestamp: iso(base), quality: 'Good', value: 3, binding: 0 },
  ]);
  t.deepEqual((await s.delta(id)).json.values, []);
});

test('a mixed set: Local changes and newly logged samples in one Delta, each with its binding', async (t) => {
  const s = await historySetup(t);
  const id = await createSet(t, s, [logged('Live/**', 'now-1h', 'now'), local('Live/**')]);
  const at = s.api.clock.now();
  // Written to the store: the Local binding sees it at once, history logs it (onChange).
  s.api.store.write([good('Live/x', 7, at)]);
  await s.history.flush();
  const delta = await s.delta(id);
  t.is(delta.status, 200);
  t.deepEqual(delta.json.values, [
    { fullTagId: 'Live/x', utcTimestamp: iso(at), quality: 'Good', value: 7, binding: 0 },
    { ...good('Live/x', 7, at), binding: 1 },
  ]);
  t.deepEqual((await s.delta(id)).json.values, []);
});

test('an unreadable history store answers 503 history-unavailable', async (t) => {
  const s = await historySetup(t);
  await s.backend.stop();
  const response = await s.post({ bindings: [logged('Hist/**', 'now-1h', 'now')] });
  t.is(response.status, 503);
  t.is(response.json.code, 'history-unavailable');
});

test('Delta on Logged Raw pages beyond 100,000 new samples, answering each once', async (t) => {
  const s = await historySetup(t);
  const now = s.api.clock.now();
  const id = await createSet(t, s, [logged('Page/**', 'now-1h', 'now')]);
  await s.backend.append(
    Array.from({ length: 100_002 }, (_, i) => loggedGood('Page/a', now - 200_000 + i, i)),
  );
  const first = await s.delta(id);
  t.is(first.json.truncated, true);
  const values = first.json.values as Sample[];
  t.is(values.length, 100_000);
  t.is(values[99_999]?.value, 99_999);
  // Logged meanwhile: answered after the paged slice is done.
  await s.backend.append([loggedGood('Page/a', now - 1, 'late')]);
  const second = await s.delta(id);
  t.deepEqual(
    (second.json.values as Sample[]).map((v) => v.value),
    [100_000, 100_001],
  );
  t.false('truncated' in second.json);
  const third = await s.delta(id);
  t.deepEqual(
    (third.json.values as Sample[]).map((v) => v.value),
    ['late'],
  );
});

test('a client that hangs up mid-answer frees its slot once the work ends: the account is admitted again', async (t) => {
  const s = await setup(t);
  // 1,000 `**` bindings over 100 tags: 100,000 values, an answer of some 11 MB.
  s.api.store.write(Array.from({ length: 100 }, (_, i) => good(`Many/T${i}`, i)));
  const everything = { bindings: Array.from({ length: 1_000 }, () => local('Many/**')) };
  const aborts = [new AbortController(), new AbortController()];
  const abandoned = aborts.map((abort) =>
    fetch(`${s.api.baseUrl}/api/v2/TagQuerySet`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(everything),
      signal: abort.signal,
    }).catch((error: unknown) => error),
  );
  // Usually 429 here (both requests in progress); 200 when they already ended on a fast machine.
  const during = await s.post({ bindings: [local('Line1/**')] });
  t.true([200, 429].includes(during.status), `status ${during.status}`);
  for (const abort of aborts) abort.abort();
  await Promise.all(abandoned);
  // Slots free once each abandoned answer is done (it is not cut short): retry as told.
  let status = 0;
  for (let attempt = 0; attempt < 30 && status !== 200; attempt++) {
    const response = await s.post({ bindings: [local('Line1/**')] });
    status = response.status;
    if (status === 429) {
      t.is(response.json.code, 'query-capacity-reached');
      await new Promise((resolve) =>
        setTimeout(resolve, Number(response.headers.get('retry-after')) * 1_000),
      );
    }
  }
  t.is(status, 200);
});
