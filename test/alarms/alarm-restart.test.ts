import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { AlarmJournal } from '../../src/alarms/alarm-journal.js';
import { alarmJournalFile } from '../../src/alarms/alarm-service.js';
import { adminToken } from '../helpers/demo-daemon.js';
import { sampleWhen } from '../helpers/sample-when.js';
import { startTagd } from '../helpers/tagd-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const newPassword = 'a long new admin password';

/** A simulator whose level sits above the alarm's limit from its first scan. */
const profile = {
  drivers: [
    {
      type: 'simulator',
      name: 'Sim',
      scanIntervalMs: 100,
      tags: [{ name: 'Level', kind: 'square', low: 80, high: 80 }],
    },
  ],
  alarms: [
    { name: 'LevelHigh', source: 'Sim/Level', condition: 'High', limit: 50 },
    ...Array.from({ length: 5 }, (_, index) => ({
      name: `Level${index}`,
      source: 'Sim/Level',
      condition: 'High',
      limit: 10 + index,
    })),
  ],
};

async function signIn(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v2/Users/Authenticate`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: newPassword }),
  });
  return ((await response.json()) as { token: string }).token;
}

function journalEntries(stateDir: string) {
  const journal = new AlarmJournal({ file: alarmJournalFile(stateDir) });
  journal.open();
  try {
    return journal.query({ fromMs: 0, toMs: Number.MAX_SAFE_INTEGER, order: 'asc', limit: 100 });
  } finally {
    journal.close();
  }
}

test('kill -9 of tagd: unacknowledged alarms stay so, and no acknowledgement answered is lost', async (t) => {
  t.timeout(600_000);
  const folder = await tempDir(t);
  const stateDir = join(folder, 'state');
  const file = join(folder, 'profile.json');
  await writeFile(file, JSON.stringify(profile));
  const args = ['start', '--profile', file, '--listen', '127.0.0.1:0'];
  const env = { TAGD_STATE_DIR: stateDir };

  const first = startTagd(args, { env });
  t.teardown(() => first.child.kill('SIGKILL'));
  const firstUrl = (await first.waitForLog('tagd ready')).url as string;
  const firstToken = await adminToken(firstUrl, stateDir);
  await sampleWhen(
    firstUrl,
    firstToken,
    'Alarms/LevelHigh/State',
    (s) => s.value === 'Unacknowledged',
  );
  first.child.kill('SIGKILL');
  t.is(await first.exited, 'SIGKILL');

  const second = startTagd(args, { env });
  t.teardown(() => second.child.kill('SIGKILL'));
  const url = (await second.waitForLog('tagd ready')).url as string;
  const token = await signIn(url);
  // Read again by the simulator: the state is confirmed (Good), and it is still unacknowledged.
  const state = await sampleWhen(url, token, 'Alarms/LevelHigh/State', (s) => s.quality === 'Good');
  t.is(state.value, 'Unacknowledged');
  const acknowledged = await sampleWhen(url, token, 'Alarms/LevelHigh/Acknowledged', () => true);
  t.like(acknowledged, { quality: 'Good', value: false });
  // One activation each: a restored alarm is not taken for a new occurrence.
  t.deepEqual(
    journalEntries(stateDir)
      .map((entry) => `${entry.name}:${entry.event}`)
      .sort(),
    ['Level0', 'Level1', 'Level2', 'Level3', 'Level4', 'LevelHigh'].map(
      (name) => `${name}:Activated`,
    ),
  );

  // Acknowledged, answered, killed at once: not one acknowledgement is lost.
  const single = await fetch(`${url}/api/v2/Alerts/LevelHigh/Acknowledge`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ comment: 'seen' }),
  });
  t.is(single.status, 200);
  const bulk = await fetch(`${url}/api/v2/Alerts/Acknowledge`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ names: ['Level0', 'Level1', 'Level2', 'Level3', 'Level4'] }),
  });
  second.child.kill('SIGKILL');
  const results = ((await bulk.json()) as { results: { status: number }[] }).results;
  t.deepEqual(
    results.map((result) => result.status),
    [200, 200, 200, 200, 200],
  );
  t.is(await second.exited, 'SIGKILL');

  const third = startTagd(args, { env });
  t.teardown(() => third.child.kill('SIGKILL'));
  const thirdUrl = (await third.waitForLog('tagd ready')).url as string;
  const thirdToken = await signIn(thirdUrl);
  for (const name of ['LevelHigh', 'Level0', 'Level1', 'Level2', 'Level3', 'Level4']) {
    const state = await sampleWhen(
      thirdUrl,
      thirdToken,
      `Alarms/${name}/State`,
      (s) => s.quality === 'Good',
    );
    t.is(state.value, 'Acknowledged', name);
  }
  t.is(journalEntries(stateDir).filter((entry) => entry.event === 'Acknowledged').length, 6);
  third.child.kill('SIGTERM');
  t.is(await third.exited, 0);
});
