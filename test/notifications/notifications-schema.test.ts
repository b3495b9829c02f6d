/**
 * The `notifications` section: the SMTP password is sealed at rest by the profile store and
 * masked on the way out; the rules' fields are checked with answers that name them.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { notificationsSchema } from '../../src/notifications/notifications-schema.js';
import { ProfileStore } from '../../src/profile/profile-store.js';
import { profileSchema } from '../../src/profile/schema.js';
import { SecretBox } from '../../src/profile/secret-box.js';
import { maskSecrets, secretMask } from '../../src/profile/secret-fields.js';
import { tempDir } from '../helpers/temp-dir.js';

const password = 'smtp-Passw0rd!';
const notifications = {
  smtp: {
    host: 'mail.plant.example',
    username: 'tagd',
    password,
    from: 'tagd <tagd@plant.example>',
  },
  rules: [
    { name: 'shift', areas: ['Hall2'], minPriority: 'High', recipients: ['a@plant.example'] },
  ],
};

test('the SMTP password is sealed in the profile file, open in memory, masked on the way out', async (t) => {
  const folder = await tempDir(t);
  const file = join(folder, 'profile.json');
  await writeFile(file, JSON.stringify({ notifications }));
  const box = await SecretBox.open(join(folder, 'state'));
  const profile = await new ProfileStore({ file, secretBox: box }).load();
  t.is(profile.notifications?.smtp.password, password);
  const onDisk = await readFile(file, 'utf8');
  t.false(onDisk.includes(password));
  t.regex(JSON.parse(onDisk).notifications.smtp.password, /^enc:v1:/);
  const masked = maskSecrets(profileSchema, profile);
  t.is(masked.notifications?.smtp.password, secretMask);
  t.false(JSON.stringify(masked).includes(password));
});

test('defaults: STARTTLS required, port by secure, no delay, no consolidation', (t) => {
  const parsed = notificationsSchema.parse(notifications);
  t.like(parsed.smtp, { secure: false, requireTls: true, timeoutMs: 30_000 });
  t.like(parsed.rules[0], { delayMs: 0, consolidationMs: 0 });
});

test('bad rules are refused naming the field', (t) => {
  const result = notificationsSchema.safeParse({
    ...notifications,
    smtp: { ...notifications.smtp, username: undefined },
    rules: [
      { name: 'a', recipients: ['not an address'], minPriority: 'Severe', delayMs: -1 },
      { name: 'b', recipients: ['b@plant.example'], areas: ['Hall2//Ovens'] },
    ],
  });
  t.false(result.success);
  const paths = result.error?.issues.map((issue) => issue.path.join('.')).sort();
  t.deepEqual(paths, [
    'rules.0.delayMs',
    'rules.0.minPriority',
    'rules.0.recipients.0',
    'rules.1.areas.0',
    'smtp.username',
  ]);
  const twice = notificationsSchema.safeParse({
    ...notifications,
    rules: [...notifications.rules, ...notifications.rules],
  });
  t.deepEqual(
    twice.error?.issues.map((issue) => [issue.path.join('.'), issue.message]),
    [['rules.1.name', "Another rule is named 'shift'."]],
  );
});
