import test from 'ava';
import type { Sample } from '../../../src/tags/sample.js';
import { startApi } from '../../helpers/api-harness.js';

const temperature: Sample = {
  fullTagId: 'Line1/Press/Temperature',
  utcTimestamp: '2026-01-01T00:00:01.250Z',
  quality: 'Good',
  value: 81.5,
  metadata: { unit: '°C', description: 'Platen temperature', source: 'sim:sine' },
};

async function setup(t: import('ava').ExecutionContext) {
  const api = await startApi(t);
  api.store.write([temperature]);
  await api.addUser('viewer', ['Viewers']);
  await api.addUser('nobody', []);
  return { api, token: await api.signIn('viewer') };
}

test('a Viewer reads the latest sample, exactly as stored', async (t) => {
  const { api, token } = await setup(t);
  const response = await api.request('/api/v2/Tags/Sample/Line1/Press/Temperature', { token });
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
  t.deepEqual(response.body, temperature);
});

test('the path may use literal slashes or %2F, and the answers are the same', async (t) => {
  const { api, token } = await setup(t);
  const literal = await api.request('/api/v2/Tags/Sample/Line1/Press/Temperature', { token });
  const encoded = await api.request('/api/v2/Tags/Sample/Line1%2FPress%2FTemperature', { token });
  const mixed = await api.request('/api/v2/Tags/Sample/Line1/Press%2fTemperature', { token });
  t.is(encoded.status, 200);
  t.is(mixed.status, 200);
  t.deepEqual(encoded.body, literal.body);
  t.deepEqual(mixed.body, literal.body);
  t.deepEqual(literal.body, temperature);
});

test('a sample carries reason and message when it is not Good, and no value when Unavailable', async (t) => {
  const { api, token } = await setup(t);
  const disconnected: Sample = {
    fullTagId: 'Line2/Pump/Flow',
    utcTimestamp: '2026-01-01T00:00:02.000Z',
    quality: 'Unavailable',
    reason: 'Disconnected',
    message: 'Connection to 10.0.0.5:502 lost.',
  };
  api.store.write([disconnected]);
  const response = await api.request('/api/v2/Tags/Sample/Line2/Pump/Flow', { token });
  t.is(response.status, 200);
  t.deepEqual(response.body, disconnected);
});

test('a service token with TagView reads samples too', async (t) => {
  const { api } = await setup(t);
  const token = await api.serviceToken('dashboard', ['Viewers']);
  const response = await api.request('/api/v2/Tags/Sample/Line1%2FPress%2FTemperature', {
    token,
  });
  t.is(response.status, 200);
  t.deepEqual(response.body, temperature);
});

test('an unknown tag is a 404 tag-not-found problem', async (t) => {
  const { api, token } = await setup(t);
  const response = await api.request('/api/v2/Tags/Sample/Line1/Press/Nope', { token });
  t.is(response.status, 404);
  t.is(response.headers.get('content-type'), 'application/problem+json');
  t.deepEqual(response.body, {
    type: 'urn:tagd:problem:tag-not-found',
    title: 'Not Found',
    status: 404,
    detail: "Tag 'Line1/Press/Nope' does not exist.",
    instance: '/api/v2/Tags/Sample/Line1/Press/Nope',
    code: 'tag-not-found',
  });
});

test('without a token the answer is 401 with a Bearer challenge', async (t) => {
  const { api } = await setup(t);
  const response = await api.request('/api/v2/Tags/Sample/Line1/Press/Temperature');
  t.is(response.status, 401);
  t.is(response.headers.get('www-authenticate'), 'Bearer realm="tagd"');
  t.is(response.headers.get('content-type'), 'application/problem+json');
  t.is(response.json.code, 'unauthorized');
  t.is(response.json.detail, 'A Bearer token is required.');
});

test('an invalid token is 401, never the sample', async (t) => {
  const { api, token } = await setup(t);
  const response = await api.request('/api/v2/Tags/Sample/Line1/Press/Temperature', {
    token: `${token.slice(0, -2)}xx`,
  });
  t.is(response.status, 401);
  t.is(response.json.code, 'unauthorized');
  t.is(response.json.value, undefined);
});

test('an account without TagView gets 403', async (t) => {
  const { api } = await setup(t);
  const token = await api.signIn('nobody');
  const response = await api.request('/api/v2/Tags/Sample/Line1/Press/Temperature', { token });
  t.is(response.status, 403);
  t.is(response.headers.get('content-type'), 'application/problem+json');
  t.deepEqual(response.body, {
    type: 'urn:tagd:problem:forbidden',
    title: 'Forbidden',
    status: 403,
    detail: 'This route needs the TagView permission.',
    instance: '/api/v2/Tags/Sample/Line1/Press/Temperature',
    code: 'forbidden',
  });
});

test('a malformed tag path is a 400 invalid-tag-path problem that says what is wrong', async (t) => {
  const { api, token } = await setup(t);
  for (const [path, reason] of [
    ['Line1//Temp', 'it has an empty segment (leading, trailing or double slash)'],
    ['Line1/Te mp', "segment 'Te mp' may only hold letters, digits and _ . : -"],
  ] as const) {
    const response = await api.request(`/api/v2/Tags/Sample/${path.replace(' ', '%20')}`, {
      token,
    });
    t.is(response.status, 400, path);
    t.is(response.json.code, 'invalid-tag-path', path);
    t.true(String(response.json.detail).endsWith(reason), String(response.json.detail));
  }
});
