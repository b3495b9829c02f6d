/** config/examples/modbus.json is a valid profile, and its driver entry plans as documented. */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { validateProfile } from '../../../src/profile/validate-profile.js';
import { modbusSubject } from '../../helpers/modbus-harness.js';

const example: unknown = JSON.parse(
  readFileSync(new URL('../../../config/examples/modbus.json', import.meta.url), 'utf8'),
);

test('config/examples/modbus.json validates', (t) => {
  const result = validateProfile(example);
  t.deepEqual(result.errors, []);
  const driver = result.profile?.drivers[0];
  if (driver?.type !== 'modbus') return t.fail('the example holds a Modbus driver');
  t.is(driver.tags.length, 7);
  t.like(driver, { maxRegistersPerRequest: 125, maxBitsPerRequest: 2000, reconnectDelayMs: 1000 });
});

test('the example’s tags need 5 requests per second and 1 per minute', async (t) => {
  const entry = (example as { drivers: Record<string, unknown>[] }).drivers[0] ?? {};
  const { type: _type, name: _name, ...input } = entry;
  // Start plans the polls; the stand-in transport refuses to connect.
  const { driver } = modbusSubject(input, { opener: () => Promise.reject(new Error('offline')) });
  await driver.start();
  const planned = driver.plannedRequests().map((group) => ({
    ...group,
    requests: group.requests.sort((a, b) => a.table.localeCompare(b.table) || a.start - b.start),
  }));
  t.deepEqual(planned, [
    {
      intervalMs: 1000,
      requests: [
        // input registers 0–3 (temperature, pressure), holding 10 (bit) and 200–207 (string:
        // 190 registers apart, more than maxGap), coil 0, discrete input 4.
        { table: 'coil', start: 0, count: 1 },
        { table: 'discreteInput', start: 4, count: 1 },
        { table: 'holdingRegister', start: 10, count: 1 },
        { table: 'holdingRegister', start: 200, count: 8 },
        { table: 'inputRegister', start: 0, count: 4 },
      ],
    },
    { intervalMs: 60_000, requests: [{ table: 'holdingRegister', start: 100, count: 2 }] },
  ]);
  await driver.stop();
});
