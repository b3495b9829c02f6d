import type { FieldError } from '../errors.js';
import { type Profile, profileSchema } from './schema.js';
import { isSealed, type SecretBox } from './secret-box.js';
import { findSecrets, setAtPath } from './secret-fields.js';
import { formatPath, validateProfile } from './validate-profile.js';

/** Outcome of {@link checkProfile}. */
export interface ProfileCheck {
  /** Every problem found; empty when the profile is valid. */
  errors: FieldError[];
  /** Paths of sealed secrets whose content could not be checked (no key at hand). */
  uncheckedSecrets: string[];
  /**
   * The profile with defaults applied and secrets opened, when it is valid and every secret
   * could be opened; what the start-up checks (startup-checks.ts) run on.
   */
  profile?: Profile;
  /**
   * The document with every sealed secret opened, when there were none or all could be opened
   * (whether or not it is valid): what the start-up checks of its valid parts run on.
   */
  opened?: unknown;
}

/**
 * Validates a profile document as `tagd profile check` does, without changing anything: sealed
 * secrets are opened with the key when there is one (a value this key cannot open is an
 * error), and otherwise left unchecked — their format errors are not reported, since a sealed
 * value is no URL or token until opened.
 */
export function checkProfile(document: unknown, secretBox: SecretBox | undefined): ProfileCheck {
  const sealed = findSecrets(profileSchema, document).filter((found) => isSealed(found.value));
  const paths = sealed.map((found) => formatPath(found.path));
  if (secretBox === undefined) {
    const validation = validateProfile(document);
    const errors = validation.errors.filter((error) => !paths.includes(error.path));
    if (paths.length > 0) return { errors, uncheckedSecrets: paths };
    if (!validation.ok) return { errors, uncheckedSecrets: [], opened: document };
    return { errors, uncheckedSecrets: [], profile: validation.profile, opened: document };
  }
  const copy = structuredClone(document);
  const errors: FieldError[] = [];
  for (const found of sealed) {
    try {
      setAtPath(copy, found.path, secretBox.unseal(found.value, formatPath(found.path)));
    } catch (error) {
      errors.push({ path: formatPath(found.path), message: (error as Error).message });
    }
  }
  const validation = validateProfile(copy);
  errors.push(...validation.errors);
  if (errors.length > 0 || !validation.ok) return { errors, uncheckedSecrets: [], opened: copy };
  return { errors, uncheckedSecrets: [], profile: validation.profile, opened: copy };
}
