/**
 * What changed between two validated profiles, per component: each driver, collection,
 * webhook and MQTT publisher by name, and the history, extensions and license sections as wholes. Two
 * entries are the same when they are deeply equal after validation (defaults applied), so
 * writing a default out explicitly restarts nothing.
 *
 * The listeners (`server`), token lifetimes and the write rate limit (`security`) and query
 * limits (`queries`) are built into the running API and cannot be swapped under open
 * connections: a change there is listed in {@link ProfileDiff.requiresRestart}, and takes effect
 * at the next `systemctl restart tagd`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { DriverConfig } from '../../drivers/registry.js';
import type { AlarmDefinition } from '../alarms/alarm-schema.js';
import type { Profile } from '../profile/schema.js';
import type { MqttConfig } from '../publishers/mqtt/schema.js';
import type { WebhookConfig } from '../publishers/webhook/schema.js';
import type { CollectionDefinition } from '../tags/collections.js';

/** How a component differs between the running profile and the new one. */
export type ChangeKind = 'added' | 'changed' | 'removed' | 'unchanged';

/** One named entry of a list section (a driver, a collection, a publisher). */
export interface EntryChange<Entry> {
  name: string;
  kind: ChangeKind;
  /** The entry in the running profile; absent when added. */
  before?: Entry;
  /** The entry in the new profile; absent when removed. */
  after?: Entry;
}

/** Every difference that matters to the running components. */
export interface ProfileDiff {
  /** Drivers in the new profile's order, then the removed ones. */
  drivers: EntryChange<DriverConfig>[];
  collections: EntryChange<CollectionDefinition>[];
  webhooks: EntryChange<WebhookConfig>[];
  mqtt: EntryChange<MqttConfig>[];
  alarms: EntryChange<AlarmDefinition>[];
  /** The `alarmJournal` section (its retention). */
  alarmJournal: ChangeKind;
  /** The `notifications` section (alarm e-mail). */
  notifications: ChangeKind;
  history: ChangeKind;
  extensions: ChangeKind;
  /** The `license` section itself; the file's content is re-read at every reload anyway. */
  license: ChangeKind;
  /** Sections that changed but only take effect at a restart: `server`, `security`, `queries`. */
  requiresRestart: string[];
}

/** Sections a reload cannot apply to the running daemon. */
export const restartOnlySections = ['server', 'security', 'queries'] as const;

/** Compares the running profile with a new one; see the module comment. */
export function diffProfiles(before: Profile, after: Profile): ProfileDiff {
  return {
    drivers: diffEntries(before.drivers, after.drivers),
    collections: diffEntries(before.collections, after.collections),
    webhooks: diffEntries(before.publishers.webhooks, after.publishers.webhooks),
    mqtt: diffEntries(before.publishers.mqtt, after.publishers.mqtt),
    alarms: diffEntries(before.alarms, after.alarms),
    alarmJournal: diffSection(before.alarmJournal, after.alarmJournal),
    notifications: diffSection(before.notifications, after.notifications),
    history: diffSection(before.history, after.history),
    extensions: diffSection(before.extensions, after.extensions),
    license: diffSection(before.license, after.license),
    requiresRestart: restartOnlySections.filter(
      (section) => !isDeepStrictEqual(before[section], after[section]),
    ),
  };
}

function diffEntries<Entry extends { name: string }>(
  before: readonly Entry[],
  after: readonly Entry[],
): EntryChange<Entry>[] {
  const old = new Map(before.map((entry) => [entry.name, entry]));
  const changes: EntryChange<Entry>[] = after.map((entry) => {
    const previous = old.get(entry.name);
    if (previous === undefined) return { name: entry.name, kind: 'added', after: entry };
    const kind = isDeepStrictEqual(previous, entry) ? 'unchanged' : 'changed';
    return { name: entry.name, kind, before: previous, after: entry };
  });
  const kept = new Set(after.map((entry) => entry.name));
  for (const entry of before) {
    if (!kept.has(entry.name)) changes.push({ name: entry.name, kind: 'removed', before: entry });
  }
  return changes;
}

function diffSection(before: unknown, after: unknown): ChangeKind {
  if (before === undefined) return after === undefined ? 'unchanged' : 'added';
  if (after === undefined) return 'removed';
  return isDeepStrictEqual(before, after) ? 'unchanged' : 'changed';
}
