/**
 * What derived tags read, checked over the whole profile: a loop between derived tags (of one
 * driver or several) is a profile error naming the loop, since no evaluation order exists; a
 * reference to a tag no driver of the profile declares is a warning of `tagd profile check` (the
 * tag is Bad, NotFound, until something writes it; the profile stays valid, since a tag may come
 * from a CAN bus's DBC or appear later).
 */
import type { FieldError } from '../../src/errors.js';
import { compileExpression } from '../../src/expressions/program.js';
import { dependencyOrder } from './dependency-order.js';

/** A derived tag found in a profile, with where it sits. */
interface FoundTag {
  id: string;
  path: string;
  references: readonly string[];
}

/** The profile as far as these checks read it (raw or validated). */
interface ProfileShape {
  drivers?: unknown;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function derivedTags(profile: ProfileShape): FoundTag[] {
  const found: FoundTag[] = [];
  const drivers = Array.isArray(profile.drivers) ? profile.drivers : [];
  drivers.forEach((driver, driverIndex) => {
    if (!isRecord(driver) || driver.type !== 'derived' || typeof driver.name !== 'string') return;
    if (!Array.isArray(driver.tags)) return;
    const component = driver.name;
    driver.tags.forEach((tag, tagIndex) => {
      if (!isRecord(tag) || typeof tag.name !== 'string' || typeof tag.expression !== 'string') {
        return;
      }
      const outcome = compileExpression(tag.expression, { component });
      // An expression that does not compile is reported by the schema, at its position.
      if (!outcome.ok) return;
      found.push({
        id: `${component}/${tag.name}`,
        path: `drivers[${driverIndex}].tags[${tagIndex}].expression`,
        references: outcome.program.references,
      });
    });
  });
  return found;
}

/** The profile error of a loop between derived tags, if there is one (the first found). */
export function derivedLoopErrors(profile: ProfileShape): FieldError[] {
  const tags = derivedTags(profile);
  const order = dependencyOrder(tags);
  if (order.ok) return [];
  const first = tags.find((tag) => tag.id === order.loop[0]) as FoundTag;
  return [
    {
      path: first.path,
      message: `Derived tags form a loop, so none of them can be evaluated: ${order.loop.join(' → ')}.`,
    },
  ];
}

/**
 * Warnings for references to tags the profile does not declare: an unknown component, a
 * disabled driver, or a tag its driver does not have. Tags of CAN drivers come from their DBC
 * and are not checked here; `Publishers/…` health tags are not checked either.
 */
export function derivedReferenceWarnings(profile: ProfileShape): FieldError[] {
  const drivers = (Array.isArray(profile.drivers) ? profile.drivers : []).filter(isRecord);
  const byName = new Map<string, Record<string, unknown>>();
  for (const driver of drivers)
    if (typeof driver.name === 'string') byName.set(driver.name, driver);
  const warnings: FieldError[] = [];
  for (const tag of derivedTags(profile)) {
    for (const reference of tag.references) {
      const slash = reference.indexOf('/');
      const component = slash < 0 ? reference : reference.slice(0, slash);
      const rest = slash < 0 ? '' : reference.slice(slash + 1);
      if (component === 'Publishers') continue;
      const driver = byName.get(component);
      let problem: string | undefined;
      if (driver === undefined) {
        problem = `no driver named '${component}' is in the profile`;
      } else if (driver.enabled === false) {
        problem = `driver '${component}' is disabled`;
      } else if (driver.type !== 'can' && Array.isArray(driver.tags)) {
        const names = driver.tags.filter(isRecord).map((entry) => entry.name);
        if (!names.includes(rest)) problem = `driver '${component}' has no tag '${rest}'`;
      }
      if (problem !== undefined) {
        warnings.push({
          path: tag.path,
          message: `reads {${reference}}, but ${problem}: ${tag.id} is Bad (NotFound) until that tag exists.`,
        });
      }
    }
  }
  return warnings;
}
