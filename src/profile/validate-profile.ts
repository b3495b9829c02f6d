import type { z } from 'zod';
import { derivedLoopErrors } from '../../drivers/derived/profile-references.js';
import type { FieldError } from '../errors.js';
import { tagPathProblem } from '../tags/tag-path.js';
import { type Profile, profileSchema } from './schema.js';

/** Outcome of {@link validateProfile}: the profile, or every error found. */
export type ProfileValidation =
  | { ok: true; profile: Profile; errors: [] }
  | { ok: false; profile: undefined; errors: FieldError[] };

/**
 * Validates a parsed profile document against the schema and the rules that span fields
 * (unique names, full tag paths). Every error is reported, each with its path, so one run of
 * `tagd profile check` lists them all.
 */
export function validateProfile(
  document: unknown,
  schema: z.ZodType = profileSchema,
): ProfileValidation {
  const result = schema.safeParse(document);
  const errors = result.success ? [] : result.error.issues.flatMap(toFieldErrors);
  // Cross-field rules run on the raw document too: zod skips refinements once a field failed,
  // and the user should not have to fix errors in rounds.
  errors.push(...crossFieldErrors(document));
  if (errors.length === 0) return { ok: true, profile: result.data as Profile, errors: [] };
  return { ok: false, profile: undefined, errors: dedupe(errors) };
}

/** Formats a path as `drivers[0].tags[2].name`; the document itself is `(root)`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text === '' ? '(root)' : text;
}

/** Turns one zod issue into field errors; an unknown-keys issue names each key on its own. */
export function toFieldErrors(issue: z.core.$ZodIssue): FieldError[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      path: formatPath([...issue.path, key]),
      message: `Unknown key '${key}'.`,
    }));
  }
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    return [
      {
        path: formatPath(issue.path),
        message: `Must be one of: ${(issue as { options?: unknown[] }).options?.join(', ')}.`,
      },
    ];
  }
  return [{ path: formatPath(issue.path), message: issue.message }];
}

function crossFieldErrors(document: unknown): FieldError[] {
  if (!isRecord(document)) return [];
  const errors: FieldError[] = [];
  const drivers = Array.isArray(document.drivers) ? document.drivers : [];
  errors.push(...duplicateNames(drivers, 'drivers', 'driver'));
  drivers.forEach((driver, index) => {
    if (!isRecord(driver) || typeof driver.name !== 'string' || !Array.isArray(driver.tags)) return;
    errors.push(...duplicateNames(driver.tags, `drivers[${index}].tags`, 'tag'));
    // An invalid driver name is reported once, at the name, not again at each of its tags.
    if (tagPathProblem(driver.name) !== undefined) return;
    driver.tags.forEach((tag, tagIndex) => {
      if (!isRecord(tag) || typeof tag.name !== 'string') return;
      // Each half may be valid alone while the joined path breaks the depth or length limit.
      const problem = tagPathProblem(`${driver.name}/${tag.name}`);
      if (problem !== undefined && tagPathProblem(tag.name) === undefined) {
        errors.push({
          path: `drivers[${index}].tags[${tagIndex}].name`,
          message: `Full tag path '${driver.name}/${tag.name}' is invalid: ${problem}`,
        });
      }
    });
  });
  errors.push(...derivedLoopErrors(document));
  const collections = Array.isArray(document.collections) ? document.collections : [];
  errors.push(...duplicateNames(collections, 'collections', 'collection'));
  const publishers = isRecord(document.publishers) ? document.publishers : {};
  const webhooks = Array.isArray(publishers.webhooks) ? publishers.webhooks : [];
  errors.push(...duplicateNames(webhooks, 'publishers.webhooks', 'webhook publisher'));
  const mqtt = Array.isArray(publishers.mqtt) ? publishers.mqtt : [];
  errors.push(...duplicateNames(mqtt, 'publishers.mqtt', 'MQTT publisher'));
  // Every publisher owns the health tags Publishers/<name>/…: one name, one publisher.
  const webhookNames = new Set(
    webhooks.flatMap((webhook) => (isRecord(webhook) ? [webhook.name] : [])),
  );
  mqtt.forEach((publisher, index) => {
    if (!isRecord(publisher) || typeof publisher.name !== 'string') return;
    if (!webhookNames.has(publisher.name)) return;
    errors.push({
      path: `publishers.mqtt[${index}].name`,
      message: `A webhook publisher is named '${publisher.name}' too: publishers share the health tags Publishers/<name>/…, so names must differ.`,
    });
  });
  const alarms = Array.isArray(document.alarms) ? document.alarms : [];
  errors.push(...duplicateNames(alarms, 'alarms', 'alarm'));
  // The alarms own the tags Alarms/<name>/…: a driver of that name would mix its tags in.
  if (alarms.length > 0) {
    drivers.forEach((driver, index) => {
      if (isRecord(driver) && driver.name === 'Alarms') {
        errors.push({
          path: `drivers[${index}].name`,
          message:
            "A driver cannot be named 'Alarms' while the profile has alarms: their state tags are Alarms/<name>/….",
        });
      }
    });
  }
  return errors;
}

function duplicateNames(items: unknown[], path: string, what: string): FieldError[] {
  const firstIndex = new Map<string, number>();
  const errors: FieldError[] = [];
  items.forEach((item, index) => {
    if (!isRecord(item) || typeof item.name !== 'string') return;
    const first = firstIndex.get(item.name);
    if (first === undefined) firstIndex.set(item.name, index);
    else {
      errors.push({
        path: `${path}[${index}].name`,
        message: `Duplicate ${what} name '${item.name}' (also at ${path}[${first}]).`,
      });
    }
  });
  return errors;
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = `${error.path}\u0000${error.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
