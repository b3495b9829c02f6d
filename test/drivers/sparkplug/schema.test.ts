import test from 'ava';
import { sparkplugDriverSchema } from '../../../drivers/sparkplug/schema.js';
import { profileSchema } from '../../../src/profile/schema.js';
import { findSecrets } from '../../../src/profile/secret-fields.js';

const minimal = {
  type: 'sparkplug',
  name: 'site',
  brokerUrl: 'mqtts://user:pw@broker.site:8883',
  hostId: 'central',
};

test('defaults: every group, 60 s staleness, 5 s between rebirth requests, for a confirmation and to drain at stop, no writes', (t) => {
  const config = sparkplugDriverSchema.parse(minimal);
  t.like(config, {
    enabled: true,
    staleAfterMs: 60_000,
    rebirthIntervalMs: 5_000,
    writeConfirmTimeoutMs: 5_000,
    stopDrainMs: 5_000,
    authentication: { mode: 'None' },
  });
  t.is(config.groupIds, undefined);
  t.is(config.allowWrites, undefined);
});

test('the broker URL and the password are secrets of the profile, sealed and masked like a publisher’s', (t) => {
  const profile = profileSchema.parse({
    drivers: [
      {
        ...minimal,
        authentication: { mode: 'Username password', username: 'u', password: 'secret-pw' },
      },
    ],
  });
  const found = findSecrets(profileSchema, profile).map((secret) => secret.path.join('.'));
  t.deepEqual(found.sort(), ['drivers.0.authentication.password', 'drivers.0.brokerUrl']);
});

test('bad fields are named: ids with topic wildcards, a wrong URL scheme, a bad pattern', (t) => {
  const result = sparkplugDriverSchema.safeParse({
    ...minimal,
    brokerUrl: 'http://broker',
    hostId: 'a/b',
    groupIds: ['G+'],
    writableTags: ['a//b'],
    staleAfterMs: 10,
  });
  t.false(result.success);
  const paths = result.error?.issues.map((issue) => issue.path.join('.')).sort();
  t.deepEqual(paths, ['brokerUrl', 'groupIds.0', 'hostId', 'staleAfterMs', 'writableTags.0']);
});

test('stopDrainMs: 0 (no drain) to 10,000 ms, within the daemon’s stop deadline', (t) => {
  t.is(sparkplugDriverSchema.parse({ ...minimal, stopDrainMs: 0 }).stopDrainMs, 0);
  t.is(sparkplugDriverSchema.parse({ ...minimal, stopDrainMs: 10_000 }).stopDrainMs, 10_000);
  for (const stopDrainMs of [-1, 10_001, 1.5]) {
    const result = sparkplugDriverSchema.safeParse({ ...minimal, stopDrainMs });
    t.deepEqual(
      result.error?.issues.map((issue) => issue.path.join('.')),
      ['stopDrainMs'],
      String(stopDrainMs),
    );
  }
});
