import test from 'ava';
import { mqttDriverSchema } from '../../../drivers/mqtt/schema.js';

const base = { type: 'mqtt', name: 'Mq', brokerUrl: 'mqtt://127.0.0.1:1883' };
const issues = (input: Record<string, unknown>) => {
  const result = mqttDriverSchema.safeParse({ ...base, ...input });
  return result.success
    ? []
    : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
};

test('defaults: QoS 1, staleAfterMs 60 s, maxTags 10,000, 64 KiB payloads, no writes', (t) => {
  const config = mqttDriverSchema.parse({ ...base, subscriptions: [{ topic: 'a', tag: 'A' }] });
  t.like(config, {
    qos: 1,
    staleAfterMs: 60_000,
    maxTags: 10_000,
    maxPayloadBytes: 65_536,
    keepAliveSeconds: 30,
    authentication: { mode: 'None' },
  });
  t.is(config.allowWrites, undefined);
  t.like(config.subscriptions[0], { format: 'plain', dataType: 'number', acceptRetained: true });
});

test('subscriptions are checked field by field', (t) => {
  t.deepEqual(issues({ subscriptions: [{ topic: 'a/+', tag: 'A' }] }), [
    'subscriptions.0.tag: {1} must appear'.replace(
      '{1} must appear',
      'wildcard 1 of the topic filter is not used: every {n} must appear, or two topics would feed one tag',
    ),
  ]);
  t.deepEqual(issues({ subscriptions: [{ topic: 'a/#/b', tag: 'A' }] }), [
    'subscriptions.0.topic: # must be a whole level and the last one',
  ]);
  t.deepEqual(issues({ subscriptions: [{ topic: 'a/+', tag: 'A b/{1}' }] }), [
    "subscriptions.0.tag: Invalid tag path: segment 'A b' may only hold letters, digits and _ . : -",
  ]);
  t.deepEqual(issues({ subscriptions: [{ topic: 'a', tag: 'A', format: 'json' }] }), [
    'subscriptions.0.valuePath: valuePath is required with format json, e.g. /value',
  ]);
  t.deepEqual(
    issues({ subscriptions: [{ topic: 'a', tag: 'A', format: 'tagd', valuePath: '/v' }] }),
    [
      'subscriptions.0.valuePath: format tagd reads /value, /utcTimestamp and /quality; valuePath is for format json',
    ],
  );
  t.deepEqual(
    issues({ subscriptions: [{ topic: 'a', tag: 'A', format: 'json', valuePath: 'v' }] }),
    [
      'subscriptions.0.valuePath: a JSON Pointer starts with / (e.g. /value), or is empty for the whole document',
    ],
  );
  t.deepEqual(issues({ subscriptions: [{ topic: 'a/+', tag: 'A/{1}', writeTopic: 'a/set' }] }), [
    'subscriptions.0.writeTopic: writeTopic is for a topic without wildcards',
  ]);
  t.deepEqual(issues({ subscriptions: [{ topic: 'a', tag: 'A', writeTopic: 'a/+' }] }), [
    'subscriptions.0.writeTopic: it must not hold the wildcards + or #',
  ]);
  t.deepEqual(issues({ subscriptions: [{ topic: 'a', tag: 'A', writeMin: 1 }] }), [
    'subscriptions.0.writeMin: writeMin and writeMax are for subscriptions with a writeTopic',
  ]);
  t.deepEqual(
    issues({
      subscriptions: [
        { topic: 'a', tag: 'A' },
        { topic: 'b', tag: 'A' },
      ],
    }),
    ['subscriptions.1.tag: tag A is already fed by subscriptions[0]'],
  );
  t.deepEqual(issues({ brokerUrl: 'http://x', subscriptions: [{ topic: 'a', tag: 'A' }] }), [
    'brokerUrl: The broker URL must be an mqtt://, mqtts://, ws:// or wss:// address.',
  ]);
  t.deepEqual(issues({ subscriptions: [] }).length, 1);
});
