import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { openPublisherOutbox } from '../../src/publishers/publisher-outbox.js';
import { captureLogs } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';

test('opens the outbox file, creating its folder; nothing is logged', async (t) => {
  const dir = await tempDir(t);
  const { logger, lines } = captureLogs();
  const outbox = openPublisherOutbox(
    { file: join(dir, 'outbox', 'mqtt-line1.db'), limitBytes: 1024 * 1024 },
    logger,
    "MQTT publisher 'line1'",
  );
  t.truthy(outbox);
  t.teardown(() => outbox?.close());
  t.is(outbox?.depth, 0);
  t.deepEqual(lines, []);
});

test('a file that cannot be opened: undefined, and the log names the publisher and the error', async (t) => {
  const dir = await tempDir(t);
  // A directory where the database file should be: SQLite cannot open it.
  const file = join(dir, 'webhook-plant.db');
  await mkdir(file);
  const { logger, lines } = captureLogs();
  const outbox = openPublisherOutbox(
    { file, limitBytes: 1024 * 1024 },
    logger,
    "Webhook publisher 'plant'",
  );
  t.is(outbox, undefined);
  const line = lines.find((logged) => logged.level === 50);
  t.is(line?.msg, "Webhook publisher 'plant' cannot start: its outbox cannot be opened.");
  t.truthy(line?.err);
});
