/**
 * When a publisher may run (spec §3.1), for every kind of publisher: the data relay feature is
 * licensed, at least one collection is selected, and every selected collection exists.
 */
import { editionsWith, type LicenseState } from '../license/license.js';
import type { Collections } from '../tags/collections.js';

/**
 * Why a publisher of these collections cannot run, or undefined when it can.
 * @param license the license in force.
 * @param collections the collections that exist.
 * @param selected the names the publisher is configured with.
 */
export function runBlocker(
  license: LicenseState,
  collections: Pick<Collections, 'has'>,
  selected: readonly string[],
): string | undefined {
  if (!license.features.has('dataRelay')) {
    const editions = editionsWith('dataRelay').join(' or ');
    const held =
      license.edition === 'unlicensed'
        ? `no valid license is installed${license.problem ? ` (${license.problem})` : ''}`
        : `the license is for the ${license.edition} edition`;
    return `The data relay feature is not licensed: it needs the ${editions} edition, and ${held}.`;
  }
  if (selected.length === 0) return 'No collection is selected.';
  const missing = selected.filter((name) => !collections.has(name));
  if (missing.length === 1) return `Collection '${missing[0]}' does not exist.`;
  if (missing.length > 1) {
    return `Collections ${missing.map((name) => `'${name}'`).join(', ')} do not exist.`;
  }
  return undefined;
}
