import test from 'ava';
import type { PublisherCounters } from '../../../src/publishers/publisher.js';
import { DropWarnings } from '../../../src/publishers/trigger/drop-warnings.js';
import { captureLogs } from '../../helpers/log-capture.js';

function counters(droppedSamples = 0): PublisherCounters {
  return { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples };
}

test('a tick warns once about the updates dropped since the last warning; none without drops', (t) => {
  const counted = counters();
  const { logger, lines } = captureLogs();
  const warnings = new DropWarnings(counted, logger);
  warnings.tick(100);
  t.is(lines.length, 0);
  counted.droppedSamples += 7;
  warnings.tick(100);
  t.is(lines.length, 1);
  t.like(lines[0], { level: 40, dropped: 7, bufferSize: 100 });
  t.is(
    lines[0]?.msg,
    'Everything buffer full: the 7 oldest updates were dropped since the last publish (the buffer holds 100).',
  );
  warnings.tick(100);
  t.is(lines.length, 1, 'nothing new dropped: no second warning');
  counted.droppedSamples += 2;
  warnings.tick(100);
  t.like(lines[1], { dropped: 2 });
});

test('restart forgets the drops of an earlier run', (t) => {
  const counted = counters(5);
  const { logger, lines } = captureLogs();
  const warnings = new DropWarnings(counted, logger);
  warnings.restart();
  warnings.tick(10);
  t.is(lines.length, 0);
  counted.droppedSamples += 1;
  warnings.tick(10);
  t.like(lines[0], { dropped: 1, bufferSize: 10 });
});
