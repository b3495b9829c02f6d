/**
 * A running alarm service over a tag store, on a given clock, with its journal in a temporary
 * folder: what the alarm-event consumers (publishers, e-mail) are tested against. A tag write
 * trips an alarm exactly as a driver's reading would.
 */
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { AlarmJournal } from '../../src/alarms/alarm-journal.js';
import { type AlarmDefinitionInput, alarmDefinitionSchema } from '../../src/alarms/alarm-schema.js';
import { AlarmService } from '../../src/alarms/alarm-service.js';
import type { Clock } from '../../src/clock.js';
import type { TagValue } from '../../src/tags/sample.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from './log-capture.js';
import { tempDir } from './temp-dir.js';

/** Three alarms on `Hall2/Oven1/Temp`, `Hall20/Oven/Temp` and `Hall2/Oven1/Door`. */
export const rigAlarms: AlarmDefinitionInput[] = [
  {
    name: 'Oven1High',
    source: 'Hall2/Oven1/Temp',
    condition: 'High',
    limit: 250,
    priority: 'High',
    area: 'Hall2/Ovens',
    message: 'Oven 1 above {limit} °C: {value} °C',
  },
  {
    name: 'Hall20High',
    source: 'Hall20/Oven/Temp',
    condition: 'High',
    limit: 250,
    priority: 'Urgent',
    area: 'Hall20',
  },
  {
    name: 'Oven1Door',
    source: 'Hall2/Oven1/Door',
    condition: 'Digital',
    value: true,
    priority: 'Low',
    area: 'Hall2/Ovens',
  },
];

/** Starts the rig; stopped at the test's end. */
export async function startAlarmRig(
  t: ExecutionContext,
  clock: Clock,
  inputs: AlarmDefinitionInput[] = rigAlarms,
) {
  const dir = await tempDir(t);
  const store = new TagStore({ clock });
  const logs = captureLogs();
  const service = new AlarmService({
    store,
    clock,
    logger: logs.logger,
    journal: new AlarmJournal({ file: join(dir, 'alarms.db') }),
    definitions: inputs.map((input) => alarmDefinitionSchema.parse(input)),
  });
  const write = (fullTagId: string, value: TagValue) =>
    store.write([
      { fullTagId, utcTimestamp: new Date(clock.now()).toISOString(), quality: 'Good', value },
    ]);
  write('Hall2/Oven1/Temp', 200);
  write('Hall20/Oven/Temp', 200);
  write('Hall2/Oven1/Door', false);
  await service.start();
  t.teardown(() => service.stop());
  return { dir, store, service, write, logs };
}
