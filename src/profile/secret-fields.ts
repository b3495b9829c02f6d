/**
 * Marks which profile fields hold secrets, and finds them in a document. Sections mark a field
 * with `secret(z.string()…)`; sealing, unsealing and masking then need no list of paths that
 * could drift from the schema.
 */
import { z } from 'zod';

const secretFields = z.registry<{ secret: true }>();

/**
 * Marks a string schema as a secret: sealed at rest, masked on the way out. Call it on the
 * finished field schema: `.describe()`, `.refine()` or `.meta()` after it return a new schema
 * that is not marked (wrapping in `.optional()` after it is fine).
 */
export function secret<Schema extends z.ZodType<string | undefined>>(schema: Schema): Schema {
  secretFields.add(schema, { secret: true });
  return schema;
}

/** A secret found in a document: where, and its current value. */
export interface SecretLocation {
  path: (string | number)[];
  value: string;
}

/** Lists every secret field present in `value`, walking it alongside `schema`. */
export function findSecrets(schema: z.ZodType, value: unknown): SecretLocation[] {
  const found: SecretLocation[] = [];
  walk(schema, value, [], found);
  return found;
}

/** Replaces the value at `path` in a plain JSON document. */
export function setAtPath(
  document: unknown,
  path: readonly (string | number)[],
  value: unknown,
): void {
  let node = document as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
}

function walk(
  schema: z.ZodType,
  value: unknown,
  path: (string | number)[],
  found: SecretLocation[],
) {
  if (value === undefined || value === null) return;
  if (secretFields.has(schema)) {
    if (typeof value === 'string') found.push({ path, value });
    return;
  }
  const def = schema.def as unknown as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'nonoptional':
    case 'catch':
      return walk(def.innerType as z.ZodType, value, path, found);
    case 'pipe':
      return walk(def.in as z.ZodType, value, path, found);
    case 'lazy':
      return walk((def.getter as () => z.ZodType)(), value, path, found);
    case 'object': {
      if (typeof value !== 'object') return;
      const shape = def.shape as Record<string, z.ZodType>;
      for (const [key, child] of Object.entries(shape)) {
        walk(child, (value as Record<string, unknown>)[key], [...path, key], found);
      }
      return;
    }
    case 'array':
      if (!Array.isArray(value)) return;
      value.forEach((item, index) => {
        walk(def.element as z.ZodType, item, [...path, index], found);
      });
      return;
    case 'record':
      if (typeof value !== 'object') return;
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        walk(def.valueType as z.ZodType, item, [...path, key], found);
      }
      return;
    case 'union': {
      const branch = unionBranch(def, value);
      if (branch) walk(branch, value, path, found);
      return;
    }
    default:
      return;
  }
}

// A discriminated union is resolved by its discriminator alone: secrets are looked for before
// validation, while a sealed value may still fail its field's own checks (a sealed URL is no URL).
function unionBranch(def: Record<string, unknown>, value: unknown): z.ZodType | undefined {
  const options = def.options as z.ZodType[];
  const discriminator = def.discriminator as string | undefined;
  if (discriminator !== undefined && typeof value === 'object') {
    const tag = (value as Record<string, unknown>)[discriminator];
    return options.find((option) => {
      const shape = (option.def as unknown as { shape?: Record<string, z.ZodType> }).shape;
      // The discriminator's own schema decides (a literal, an enum, a union of literals).
      return shape?.[discriminator]?.safeParse(tag).success ?? false;
    });
  }
  return options.find((option) => option.safeParse(value).success);
}

/** What a secret looks like on every way out (API, logs, errors). */
export const secretMask = '********';

/** A copy of `value` with every secret field replaced by {@link secretMask}. */
export function maskSecrets<T>(schema: z.ZodType, value: T): T {
  const secrets = findSecrets(schema, value);
  if (secrets.length === 0) return value;
  const copy = structuredClone(value);
  for (const found of secrets) setAtPath(copy, found.path, secretMask);
  return copy;
}

/**
 * A copy of `incoming` where every secret field that holds {@link secretMask} takes the value
 * at the same path in `stored`, so a client that saves back what it read keeps the secrets.
 * A mask with nothing stored behind it stays, and fails validation as what it is.
 */
export function unmaskSecrets<T>(schema: z.ZodType, incoming: T, stored: unknown): T {
  const masked = findSecrets(schema, incoming).filter((found) => found.value === secretMask);
  if (masked.length === 0) return incoming;
  const copy = structuredClone(incoming);
  for (const found of masked) {
    const previous = valueAtPath(stored, found.path);
    if (typeof previous === 'string') setAtPath(copy, found.path, previous);
  }
  return copy;
}

function valueAtPath(document: unknown, path: readonly (string | number)[]): unknown {
  let node = document;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}
