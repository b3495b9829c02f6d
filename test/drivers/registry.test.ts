import test from 'ava';
import { pino } from 'pino';
import {
  createDriver,
  type DriverConfig,
  driverConfigSchema,
  driverTypes,
} from '../../drivers/registry.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { ManualClock } from '../helpers/manual-clock.js';

const deps = () => ({
  store: new TagStore(),
  clock: new ManualClock(),
  logger: pino({ level: 'silent' }),
  stateDir: '/nonexistent',
});

test('createDriver loads the type named in the config and builds it without starting it', async (t) => {
  const config = driverConfigSchema.parse({
    type: 'simulator',
    name: 'Sim',
    tags: [{ name: 'A', kind: 'counter' }],
  });
  const { store, ...rest } = deps();
  const driver = await createDriver(config, { store, ...rest });
  t.is(driver.type, 'simulator');
  t.is(driver.name, 'Sim');
  t.is(driver.status().state, 'Stopped');
  t.is(store.size, 0, 'constructing does no I/O and declares nothing');
});

test('an unknown type is a DriverLoadError naming the known types', async (t) => {
  const config = { type: 'profibus', name: 'X' } as unknown as DriverConfig;
  const error = await t.throwsAsync(() => createDriver(config, deps()));
  t.is((error as { code?: string }).code, 'driver-unavailable');
  t.is(error?.message, `Unknown driver type 'profibus' (known: ${driverTypes.join(', ')}).`);
});

test('the profile schema accepts exactly the registered types', (t) => {
  for (const type of driverTypes) {
    const result = driverConfigSchema.safeParse({ type, name: 'X' });
    const typeIssue = result.error?.issues.find((issue) => issue.path.join('.') === 'type');
    t.is(typeIssue, undefined, type);
  }
  t.false(driverConfigSchema.safeParse({ type: 'profibus', name: 'X' }).success);
});
