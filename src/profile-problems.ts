/**
 * Every problem of a profile in one list, as `tagd profile check` prints it and
 * `POST /api/v2/Profile/Check` answers it: the schema's errors, sealed secrets this key cannot
 * open, and the start-up checks (listeners, certificates, DBC and broker files, the license).
 * When the schema finds errors, the start-up checks still run on the parts that are valid
 * (valid-parts.ts), so fixing a profile takes one round, not one per layer of checks. Warnings
 * (references to tags or collections the profile does not define) leave the profile valid.
 */
import type { FieldError } from './errors.js';
import { checkProfile } from './profile/check-profile.js';
import { collectionReferenceWarnings } from './profile/collection-references.js';
import type { Profile } from './profile/schema.js';
import type { SecretBox } from './profile/secret-box.js';
import { validParts } from './profile/valid-parts.js';
import {
  checkStartup,
  effectText,
  type StartupCheckOptions,
  type StartupEffect,
} from './startup-checks.js';

/** One problem: a schema error, or a start-up check's finding with what `tagd start` does. */
export interface ProfileProblem extends FieldError {
  /** For a start-up check's finding: what `tagd start` does about it. */
  effect?: StartupEffect;
}

/** How far the start-up checks got. */
export type StartupCoverage =
  /** The whole profile was checked. */
  | 'all'
  /** The profile has errors: the parts without errors were checked. */
  | 'valid-parts'
  /** Not run: sealed secrets could not be opened, or no part of the profile is valid. */
  | 'skipped';

/** The outcome of {@link listProfileProblems}. */
export interface ProfileProblems {
  /** Every problem; empty when tagd would start with everything of the profile running. */
  problems: ProfileProblem[];
  /** References to things the profile does not define; only for a profile without errors. */
  warnings: FieldError[];
  /** Sealed secrets left unchecked for want of the key. */
  uncheckedSecrets: string[];
  /** How far the start-up checks got. */
  startupChecks: StartupCoverage;
  /** The validated profile (secrets opened), when the schema found no error. */
  profile?: Profile;
}

/** Options of {@link listProfileProblems}. */
export interface ProfileProblemOptions extends StartupCheckOptions {
  /** The sealing key, to open sealed secrets; absent: they are left unchecked. */
  secretBox: SecretBox | undefined;
  /**
   * Further warnings on a valid profile (derived tags and alarms reading tags no driver
   * declares), from the layers this module may not import. Default: none.
   */
  referenceWarnings?: (profile: Profile) => FieldError[];
}

/** Lists every problem of a profile document; changes nothing. */
export async function listProfileProblems(
  document: unknown,
  options: ProfileProblemOptions,
): Promise<ProfileProblems> {
  const { secretBox, referenceWarnings, ...startupOptions } = options;
  const check = checkProfile(document, secretBox);
  const problems: ProfileProblem[] = [...check.errors];
  const base = { uncheckedSecrets: check.uncheckedSecrets };
  if (check.profile) {
    problems.push(...(await checkStartup(check.profile, startupOptions)));
    const warnings = [
      ...collectionReferenceWarnings(check.profile),
      ...(referenceWarnings?.(check.profile) ?? []),
    ];
    return { ...base, problems, warnings, startupChecks: 'all', profile: check.profile };
  }
  const parts = check.opened === undefined ? undefined : validParts(check.opened, check.errors);
  if (parts === undefined) return { ...base, problems, warnings: [], startupChecks: 'skipped' };
  for (const found of await checkStartup(parts.profile, startupOptions)) {
    problems.push({
      path: parts.originalPath(found.path),
      message: found.message,
      effect: found.effect,
    });
  }
  return { ...base, problems, warnings: [], startupChecks: 'valid-parts' };
}

/** A problem as one line of text: its message, and what `tagd start` does about it. */
export function problemText(problem: ProfileProblem): string {
  return problem.effect === undefined
    ? problem.message
    : `${problem.message} (${effectText[problem.effect]})`;
}
