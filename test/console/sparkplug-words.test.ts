import test from 'ava';
import type { MqttPublisher, SparkplugState } from '../../src/console/web/api-types.js';
import { sparkplugFormats, storeAndForwardWords } from '../../src/console/web/sparkplug-words.js';

const formats = sparkplugFormats('en-GB', 'UTC');
const now = Date.parse('2026-11-27T09:30:00Z');

function publisher(sparkplug: SparkplugState | undefined, connected = true): MqttPublisher {
  return {
    name: 'to-central',
    brokerUrl: '********',
    authentication: { mode: 'None' },
    collections: ['Line1'],
    loggingMode: 'Everything',
    updateIntervalMs: 1000,
    qos: 1,
    autoConnect: true,
    format: 'sparkplugB',
    groupId: 'Plant1',
    edgeNodeId: 'gw1',
    primaryHostId: 'central',
    bufferLimitMB: 64,
    state: {
      name: 'to-central',
      status: 'Error',
      counters: { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 },
      connected,
      messages: 0,
      queueDepth: 0,
      oldestQueuedAgeSeconds: 0,
      ...(sparkplug ? { sparkplug } : {}),
    },
  } as MqttPublisher;
}

const host = (state: Partial<SparkplugState>): SparkplugState => ({
  commandsWritten: 0,
  commandsRefused: 0,
  primaryHostOnline: false,
  primaryHostSince: '2026-11-27T08:02:00Z',
  storedSamples: 0,
  droppedSamples: 0,
  forwardedSamples: 0,
  catchingUp: false,
  ...state,
});

test('host offline: since when (today: the time alone) and what is stored', (t) => {
  t.deepEqual(storeAndForwardWords(publisher(host({ storedSamples: 12_345 })), now, formats), [
    "Primary host 'central' offline since 08:02 — storing: 12,345 samples",
  ]);
});

test('a time of another day carries its date', (t) => {
  const words = storeAndForwardWords(
    publisher(host({ primaryHostSince: '2026-11-26T23:10:00Z' })),
    now,
    formats,
  );
  t.deepEqual(words, [
    "Primary host 'central' offline since 26/11/2026, 23:10 — storing: 0 samples",
  ]);
});

test('catching up: stored samples left and forwarded; online and idle: the host alone', (t) => {
  const online = { primaryHostOnline: true, primaryHostSince: '2026-11-27T09:14:00Z' };
  t.deepEqual(
    storeAndForwardWords(
      publisher(
        host({ ...online, catchingUp: true, storedSamples: 3_210, forwardedSamples: 9_135 }),
      ),
      now,
      formats,
    ),
    [
      "Catching up: 3,210 stored samples left, 9,135 forwarded (primary host 'central' online since 09:14)",
    ],
  );
  t.deepEqual(storeAndForwardWords(publisher(host(online)), now, formats), [
    "Primary host 'central' online since 09:14",
  ]);
});

test('the broker away: storing, the host as last known', (t) => {
  const state = host({
    primaryHostOnline: true,
    primaryHostSince: '2026-11-27T09:14:00Z',
    storedSamples: 40,
  });
  t.deepEqual(storeAndForwardWords(publisher(state, false), now, formats), [
    "Broker not connected — storing: 40 samples (primary host 'central' was online since 09:14)",
  ]);
});

test('samples dropped from a full outbox are said', (t) => {
  t.deepEqual(
    storeAndForwardWords(
      publisher(host({ storedSamples: 5, droppedSamples: 1_200 })),
      now,
      formats,
    ),
    [
      "Primary host 'central' offline since 08:02 — storing: 5 samples",
      '1,200 stored samples dropped: the outbox was full',
    ],
  );
});

test('nothing without a primary host (or not running)', (t) => {
  t.deepEqual(
    storeAndForwardWords(publisher({ commandsWritten: 2, commandsRefused: 0 }), now, formats),
    [],
  );
  t.deepEqual(storeAndForwardWords(publisher(undefined), now, formats), []);
});
