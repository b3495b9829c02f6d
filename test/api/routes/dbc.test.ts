import test, { type ExecutionContext } from 'ava';
import { DbcSignalCatalog } from '../../../src/tags/dbc-signal-catalog.js';
import type { Sample } from '../../../src/tags/sample.js';
import { startApi } from '../../helpers/api-harness.js';

const speedPath = '/api/v2/DBC/CAN0/EEC1/EngineSpeed';

async function setup(t: ExecutionContext) {
  const dbc = new DbcSignalCatalog();
  dbc.register('CAN0', [
    {
      name: 'EEC1',
      signals: [
        { name: 'EngineSpeed', unit: 'rpm' },
        { name: 'EngineTorqueMode' },
        { name: 'EngineLoad', unit: '' },
      ],
    },
    { name: 'ET1', signals: [{ name: 'EngineCoolantTemp', unit: 'degC' }] },
  ]);
  const api = await startApi(t, { deps: { dbc } });
  const token = await api.serviceToken('hmi', ['Operators']);
  return { api, dbc, token };
}

test('a received signal answers its value, unit, text and raw value', async (t) => {
  const { api, token } = await setup(t);
  const speed: Sample = {
    fullTagId: 'CAN0/EEC1/EngineSpeed',
    utcTimestamp: '2026-01-01T00:00:00.125Z',
    quality: 'Good',
    value: 1450.5,
    metadata: { unit: 'rpm', valueText: 'Cruise', raw: 11604 } as Sample['metadata'],
  };
  api.store.write([speed]);
  const response = await api.request(speedPath, { token });
  t.is(response.status, 200);
  t.deepEqual(response.body, {
    component: 'CAN0',
    message: 'EEC1',
    signal: 'EngineSpeed',
    fullTagId: 'CAN0/EEC1/EngineSpeed',
    utcTimestamp: '2026-01-01T00:00:00.125Z',
    quality: 'Good',
    value: 1450.5,
    unit: 'rpm',
    valueText: 'Cruise',
    raw: 11604,
  });
});

test('without valueText and raw in the metadata, neither is answered', async (t) => {
  const { api, token } = await setup(t);
  api.store.write([
    {
      fullTagId: 'CAN0/ET1/EngineCoolantTemp',
      utcTimestamp: '2026-01-01T00:00:00.500Z',
      quality: 'Stale',
      reason: 'NoUpdate',
      value: 88,
    },
  ]);
  const response = await api.request('/api/v2/DBC/CAN0/ET1/EngineCoolantTemp', { token });
  t.is(response.status, 200);
  t.deepEqual(response.body, {
    component: 'CAN0',
    message: 'ET1',
    signal: 'EngineCoolantTemp',
    fullTagId: 'CAN0/ET1/EngineCoolantTemp',
    utcTimestamp: '2026-01-01T00:00:00.500Z',
    quality: 'Stale',
    value: 88,
    unit: 'degC',
  });
});

test('the unit comes from the sample when the DBC gives none', async (t) => {
  const { api, token } = await setup(t);
  api.store.write([
    {
      fullTagId: 'CAN0/EEC1/EngineLoad',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: 42,
      metadata: { unit: '%' },
    },
    {
      fullTagId: 'CAN0/EEC1/EngineTorqueMode',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: 3,
    },
  ]);
  const load = await api.request('/api/v2/DBC/CAN0/EEC1/EngineLoad', { token });
  t.is(load.json.unit, '%');
  const mode = await api.request('/api/v2/DBC/CAN0/EEC1/EngineTorqueMode', { token });
  t.is(mode.status, 200);
  t.false('unit' in mode.json);
  t.is(mode.json.value, 3);
});

test('a known signal never received is 200 Unavailable without a value', async (t) => {
  const { api, token } = await setup(t);
  const response = await api.request(speedPath, { token });
  t.is(response.status, 200);
  t.deepEqual(response.body, {
    component: 'CAN0',
    message: 'EEC1',
    signal: 'EngineSpeed',
    fullTagId: 'CAN0/EEC1/EngineSpeed',
    utcTimestamp: new Date(api.clock.now()).toISOString(),
    quality: 'Unavailable',
    unit: 'rpm',
  });
});

test('an Unavailable sample answers Unavailable with its own time and no value or text', async (t) => {
  const { api, token } = await setup(t);
  api.store.define([{ fullTagId: 'CAN0/EEC1/EngineSpeed' }]);
  api.clock.advance(5_000);
  api.store.write([
    {
      fullTagId: 'CAN0/EEC1/EngineSpeed',
      utcTimestamp: '2026-01-01T00:00:03.000Z',
      quality: 'Unavailable',
      reason: 'Disconnected',
      metadata: { valueText: 'Cruise' },
    },
  ]);
  const response = await api.request(speedPath, { token });
  t.deepEqual(response.body, {
    component: 'CAN0',
    message: 'EEC1',
    signal: 'EngineSpeed',
    fullTagId: 'CAN0/EEC1/EngineSpeed',
    utcTimestamp: '2026-01-01T00:00:03.000Z',
    quality: 'Unavailable',
    unit: 'rpm',
  });
});

test('a Bad signal carries its quality and no value', async (t) => {
  const { api, token } = await setup(t);
  api.store.write([
    {
      fullTagId: 'CAN0/EEC1/EngineSpeed',
      utcTimestamp: '2026-01-01T00:00:04.000Z',
      quality: 'Bad',
      reason: 'DecodeError',
    },
  ]);
  const response = await api.request(speedPath, { token });
  t.is(response.status, 200);
  t.is(response.json.quality, 'Bad');
  t.false('value' in response.json);
});

test('an unknown component, message or signal is a 404 naming which', async (t) => {
  const { api, token } = await setup(t);
  const cases: [string, string][] = [
    ['/api/v2/DBC/CAN9/EEC1/EngineSpeed', "CAN component 'CAN9' does not exist."],
    [
      '/api/v2/DBC/CAN0/EEC9/EngineSpeed',
      "Message 'EEC9' is not defined in the DBC of component 'CAN0'.",
    ],
    [
      '/api/v2/DBC/CAN0/EEC1/EngineCoolantTemp',
      "Signal 'EngineCoolantTemp' is not defined in message 'EEC1' of component 'CAN0'.",
    ],
  ];
  for (const [path, detail] of cases) {
    const response = await api.request(path, { token });
    t.is(response.status, 404, path);
    t.is(response.headers.get('content-type'), 'application/problem+json');
    t.deepEqual(response.body, {
      type: 'urn:tagd:problem:not-found',
      title: 'Not Found',
      status: 404,
      detail,
      instance: path,
      code: 'not-found',
    });
  }
});

test('a tag in the store under a name the DBC does not define is still 404', async (t) => {
  const { api, token } = await setup(t);
  api.store.write([
    {
      fullTagId: 'CAN0/EEC1/Ghost',
      utcTimestamp: '2026-01-01T00:00:00.000Z',
      quality: 'Good',
      value: 1,
    },
  ]);
  const response = await api.request('/api/v2/DBC/CAN0/EEC1/Ghost', { token });
  t.is(response.status, 404);
});

test('an unregistered component disappears from the API', async (t) => {
  const { api, dbc, token } = await setup(t);
  dbc.unregister('CAN0');
  const response = await api.request(speedPath, { token });
  t.is(response.status, 404);
  t.is(response.json.detail, "CAN component 'CAN0' does not exist.");
});

test('without a DBC catalog every component is unknown', async (t) => {
  const api = await startApi(t);
  const token = await api.serviceToken('hmi', ['Operators']);
  const response = await api.request(speedPath, { token });
  t.is(response.status, 404);
  t.is(response.json.detail, "CAN component 'CAN0' does not exist.");
});

test('without a token the answer is 401', async (t) => {
  const { api } = await setup(t);
  const response = await api.request(speedPath);
  t.is(response.status, 401);
  t.is(response.json.code, 'unauthorized');
  t.is(response.headers.get('www-authenticate'), 'Bearer realm="tagd"');
});

test('accounts without DBCView get 403: Viewers and no roles alike', async (t) => {
  const { api } = await setup(t);
  for (const [name, roles] of [
    ['viewer', ['Viewers']],
    ['nobody', []],
  ] as const) {
    const token = await api.serviceToken(name, [...roles]);
    const response = await api.request(speedPath, { token });
    t.is(response.status, 403, name);
    t.deepEqual(response.body, {
      type: 'urn:tagd:problem:forbidden',
      title: 'Forbidden',
      status: 403,
      detail: 'This route needs the DBCView permission.',
      instance: speedPath,
      code: 'forbidden',
    });
  }
});

test('a signed-in Operator reads signals', async (t) => {
  const { api } = await setup(t);
  await api.addUser('operator', ['Operators']);
  const token = await api.signIn('operator');
  const response = await api.request(speedPath, { token });
  t.is(response.status, 200);
  t.is(response.json.quality, 'Unavailable');
});
