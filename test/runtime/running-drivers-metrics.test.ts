/**
 * RunningDrivers and the metrics: each driver gets its poll-duration port, and its series go
 * when the driver is removed, restarted or fails to start (a reload, the Drivers routes).
 */
import test from 'ava';
import { driverConfigSchema } from '../../drivers/registry.js';
import { unlicensed } from '../../src/license/license.js';
import { TagdMetrics } from '../../src/metrics/tagd-metrics.js';
import { RunningDrivers } from '../../src/runtime/running-drivers.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { samplesOf, seriesValue } from '../helpers/prometheus-text.js';

const simulator = (name: string) =>
  driverConfigSchema.parse({
    type: 'simulator',
    name,
    scanIntervalMs: 1000,
    tags: [{ name: 'x', kind: 'counter' }],
  });

test("a driver's poll series appear with it and go when it is removed", async (t) => {
  const clock = new ManualClock();
  const store = new TagStore({ clock });
  const metrics = new TagdMetrics({ version: '1', processMetrics: false });
  const drivers = new RunningDrivers({
    store,
    logger: captureLogs().logger,
    license: () => unlicensed,
    shared: { clock, stateDir: '/nonexistent', profileDir: '/nonexistent' },
    metrics: (name, type) => metrics.driver(name, type),
  });
  t.teardown(() => drivers.stopAll());
  const count = async (driver: string) =>
    seriesValue((await metrics.exposition()).body, 'tagd_driver_poll_duration_seconds_count', {
      driver,
      type: 'simulator',
    });
  await drivers.start(simulator('A'));
  await drivers.start(simulator('B'));
  clock.advance(2000);
  t.is(await count('A'), 3, 'the scan at start and two more');
  // Restarted (a reload with a changed configuration): its series start again.
  await drivers.start(simulator('A'));
  t.is(await count('A'), 1);
  await drivers.stop('A');
  const body = (await metrics.exposition()).body;
  t.deepEqual(samplesOf(body, 'tagd_driver_poll_duration_seconds_count', { driver: 'A' }), []);
  t.is(seriesValue(body, 'tagd_driver_poll_duration_seconds_count', { driver: 'B' }), 3);
});
