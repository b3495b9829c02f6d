import test from 'ava';
import { driverStoppedMessage, unavailableSample } from '../../drivers/unavailable-sample.js';

test('Unavailable, Disconnected, with the message and the declared metadata; no value', (t) => {
  const sample = unavailableSample(
    { fullTagId: 'Line1/Speed', metadata: { unit: 'rpm' } },
    '2026-01-01T00:00:00.000Z',
    'Connection refused.',
  );
  t.deepEqual(sample, {
    fullTagId: 'Line1/Speed',
    utcTimestamp: '2026-01-01T00:00:00.000Z',
    quality: 'Unavailable',
    reason: 'Disconnected',
    message: 'Connection refused.',
    metadata: { unit: 'rpm' },
  });
  t.false('value' in sample);
});

test('a tag declared without metadata gives a sample without the key', (t) => {
  const sample = unavailableSample(
    { fullTagId: 'Can0/Motor/Rpm', metadata: undefined },
    '2026-01-01T00:00:00.000Z',
    driverStoppedMessage,
  );
  t.false('metadata' in sample);
  t.is(sample.message, 'The driver is stopped.');
});
