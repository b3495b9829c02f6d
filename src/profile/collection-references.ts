/**
 * Collections named by publishers and history but absent from the profile's `collections[]`.
 * Not an error (tagd starts; the publisher shows Error "Collection 'X' does not exist." and
 * the history entry logs nothing until the collection is created over the API), but almost
 * always a typo, so `tagd profile check` and `POST /api/v2/Profile/Check` name each one.
 */
import type { FieldError } from '../errors.js';
import type { Profile } from './schema.js';

/** Warnings for every reference to a collection the profile does not define. */
export function collectionReferenceWarnings(
  profile: Pick<Profile, 'collections' | 'publishers' | 'history'>,
): FieldError[] {
  const defined = new Set(profile.collections.map((collection) => collection.name));
  const warnings: FieldError[] = [];
  const check = (path: string, name: string, effect: string) => {
    if (defined.has(name)) return;
    warnings.push({
      path,
      message: `Collection '${name}' does not exist in the profile: ${effect} until it is created.`,
    });
  };
  for (const [kind, publishers] of [
    ['webhooks', profile.publishers.webhooks],
    ['mqtt', profile.publishers.mqtt],
  ] as const) {
    publishers.forEach((publisher, index) => {
      publisher.collections.forEach((name, position) => {
        check(
          `publishers.${kind}[${index}].collections[${position}]`,
          name,
          `publisher '${publisher.name}' stays in Error`,
        );
      });
    });
  }
  profile.history?.log.forEach((entry, index) => {
    if (entry.collection !== undefined) {
      check(`history.log[${index}].collection`, entry.collection, 'this entry logs nothing');
    }
  });
  return warnings;
}
