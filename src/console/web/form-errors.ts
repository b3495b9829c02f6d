/** The API's validation problems on a form: messages at their fields, the rest above the buttons. */
import { ApiError } from './api-client';

/** The message for a field or anything under it (`collections[0]`, `authentication.mode`). */
export function errorAt(errors: Record<string, string>, field: string): string | undefined {
  return Object.entries(errors).find(
    ([path]) => path === field || path.startsWith(`${field}[`) || path.startsWith(`${field}.`),
  )?.[1];
}

/**
 * The form-level message of a failed save: the problems no shown field takes, named, or a
 * pointer to the fields; the problem's detail when it names no field.
 */
export function formMessage(error: unknown, shown: readonly string[]): string {
  if (!(error instanceof ApiError)) return 'The gateway could not be reached.';
  const elsewhere = (error.problem.errors ?? []).filter(
    (entry) => !shown.some((field) => entry.path === field || entry.path.startsWith(`${field}[`)),
  );
  if (elsewhere.length > 0) {
    return `${error.message} ${elsewhere.map((entry) => `${entry.path}: ${entry.message}`).join(' ')}`;
  }
  return error.problem.errors?.length ? 'Some fields need attention.' : error.message;
}

/** The field messages of a failed save (none when it was no API answer). */
export function fieldErrorsOf(error: unknown): Record<string, string> {
  return error instanceof ApiError ? error.fieldErrors() : {};
}
