/**
 * Errors that cross a module boundary. Every error carries a stable `code` that callers and
 * API clients match on, and the HTTP status the API answers it with. The error table of
 * docs/errors.md lists every code; a test keeps the two in step.
 */

/** One failed check of a validation: where (`drivers[0].name`) and what was wrong. */
export interface FieldError {
  /** Path to the offending field, in `a.b[2].c` notation; `(root)` for the document itself. */
  path: string;
  /** Human-readable message, safe to show to a client. */
  message: string;
  /** For an expression: 1-based line of the problem in the expression's text. */
  line?: number;
  /** For an expression: 1-based column (characters) of the problem in its line. */
  column?: number;
  /** For an expression: what the parser expected there, e.g. `')'`. */
  expected?: string;
}

/** Base class of every error tagd raises on purpose. */
export class TagdError extends Error {
  /** Stable machine-readable code, e.g. `tag-not-found`. */
  readonly code: string;
  /** HTTP status the API answers with. */
  readonly status: number;

  constructor(code: string, status: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
  }
}

/** A document (request body, profile, CLI argument) failed validation; `errors` lists every problem. */
export class ValidationError extends TagdError {
  readonly errors: readonly FieldError[];

  constructor(message: string, errors: readonly FieldError[], code = 'validation-failed') {
    super(code, 400, message);
    this.errors = errors;
  }
}

/**
 * The password or two-factor code that confirms an action of the signed-in account (its own
 * two-factor enrolment or removal) is wrong. A 400 naming the field, not a 401: the session
 * itself is still good, and a browser must not take it for a session that ended.
 */
export class CredentialsRefusedError extends ValidationError {
  constructor(field: 'password' | 'code', message: string) {
    super(message, [{ path: field, message }], 'credentials-refused');
  }
}

/**
 * An expression (a derived tag's, one sent to `DerivedTags/Test`) does not parse or check:
 * `errors` holds one entry at the expression's field with its line, column and what was expected.
 */
export class ExpressionInvalidError extends ValidationError {
  constructor(message: string, errors: readonly FieldError[]) {
    super(message, errors, 'expression-invalid');
  }
}

/** A tag path does not follow the tag path rules (segments, depth, length: src/tags/tag-path.ts). */
export class InvalidTagPathError extends TagdError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super('invalid-tag-path', 400, `Invalid tag path '${truncate(path)}': ${reason}`);
  }
}

/** No tag with this fullTagId exists in the store. */
export class TagNotFoundError extends TagdError {
  constructor(readonly fullTagId: string) {
    super('tag-not-found', 404, `Tag '${truncate(fullTagId)}' does not exist.`);
  }
}

/** No collection with this name exists. */
export class CollectionNotFoundError extends TagdError {
  constructor(readonly collection: string) {
    super('collection-not-found', 404, `Collection '${truncate(collection)}' does not exist.`);
  }
}

/** The profile file was not found where tagd looked. */
export class ProfileNotFoundError extends TagdError {
  constructor(readonly file: string) {
    super(
      'profile-not-found',
      500,
      `No profile at ${file}. Pass --profile FILE or set TAGD_PROFILE.`,
    );
  }
}

/** The profile file is not valid JSON (truncated, hand-edited). It is never overwritten. */
export class ProfileCorruptError extends TagdError {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(
      'profile-corrupt',
      500,
      `Profile ${file} is not valid JSON (${detail}); it was left untouched.`,
    );
  }
}

/** The profile parsed as JSON but breaks the schema; `errors` lists every problem with its path. */
export class ProfileInvalidError extends ValidationError {
  constructor(
    readonly file: string,
    errors: readonly FieldError[],
  ) {
    super(
      `Profile ${file} is invalid (${errors.length} error${errors.length === 1 ? '' : 's'}).`,
      errors,
      'profile-invalid',
    );
  }
}

/** The key that seals secrets is missing, unreadable, the wrong size or readable by others. */
export class SecretKeyError extends TagdError {
  constructor(message: string, options?: ErrorOptions) {
    super('secret-key-unusable', 500, message, options);
  }
}

/** A sealed secret could not be opened: wrong key, or the value was altered. */
export class SecretUnsealError extends TagdError {
  constructor(readonly path: string) {
    super(
      'secret-unseal-failed',
      500,
      `The sealed value at ${path} cannot be opened with this key (wrong key or altered value).`,
    );
  }
}

/** A profile names a driver type tagd does not know, or its module failed to load. */
export class DriverLoadError extends TagdError {
  constructor(message: string, options?: ErrorOptions) {
    super('driver-unavailable', 500, message, options);
  }
}

/** Why a file named by the profile cannot be used. */
export type ProfileFileProblem = 'missing' | 'unreadable' | 'not-a-file' | 'too-large';

/**
 * A file the profile names (license, DBC, certificate, key, caFile) is missing, unreadable, not
 * a regular file or over its size limit. A configuration error: restarting cannot fix it.
 */
export class ProfileFileError extends TagdError {
  constructor(
    readonly file: string,
    readonly problem: ProfileFileProblem,
    message: string,
    options?: ErrorOptions,
  ) {
    super('profile-file-unusable', 500, message, options);
  }
}

/** Another tagd daemon runs on the same state directory (its pid in `holderPid`). */
export class StateDirLockedError extends TagdError {
  constructor(
    readonly stateDir: string,
    readonly holderPid: number,
    lockFile: string,
  ) {
    super(
      'state-dir-locked',
      500,
      `Another tagd daemon (pid ${holderPid}) runs on the state directory ${stateDir} (lock file ${lockFile}); stop it first, or give this one its own TAGD_STATE_DIR.`,
    );
  }
}

/**
 * The state directory cannot be created or written: permission denied, a read-only file system,
 * or a path through a file. A configuration error (exit 78): restarting cannot fix it.
 */
export class StateDirUnusableError extends TagdError {
  constructor(
    readonly stateDir: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super('state-dir-unusable', 500, message, options);
  }
}

/** A listener was configured in a way that would expose the API insecurely or could not bind. */
export class ListenerError extends TagdError {
  constructor(message: string, options?: ErrorOptions) {
    super('listener-failed', 500, message, options);
  }
}

/** The route or resource the client asked for does not exist. */
export class NotFoundError extends TagdError {
  constructor(message = 'No such resource.') {
    super('not-found', 404, message);
  }
}

/** Missing, invalid, expired or revoked credentials (HTTP 401). The detail never says which secret was wrong. */
export class UnauthorizedError extends TagdError {
  constructor(message = 'Missing, invalid or expired token.') {
    super('unauthorized', 401, message);
  }
}

/** Authenticated, but the account lacks the permission the route needs (HTTP 403). */
export class ForbiddenError extends TagdError {
  constructor(
    message: string,
    code: 'forbidden' | 'csrf-failed' | 'feature-unavailable' = 'forbidden',
  ) {
    super(code, 403, message);
  }
}

/**
 * Too many failed attempts (`too-many-requests`), a capacity limit that frees up with time
 * (`query-capacity-reached`, `stream-capacity-reached`), or an account writing tags faster than
 * allowed (`write-rate-exceeded`); retry after `retryAfterSeconds` (HTTP 429 with Retry-After).
 */
export class TooManyRequestsError extends TagdError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code:
      | 'too-many-requests'
      | 'query-capacity-reached'
      | 'stream-capacity-reached'
      | 'write-rate-exceeded' = 'too-many-requests',
  ) {
    super(code, 429, message);
  }
}

/** The request conflicts with the state of the service (HTTP 409). */
export class ConflictError extends TagdError {
  constructor(
    code:
      | 'history-not-configured'
      | 'already-exists'
      | 'limit-reached'
      | 'last-administrator'
      | 'alarm-state-conflict'
      | 'proposal-not-pending'
      | 'two-factor-state'
      | 'assistant-not-configured'
      | 'conversation-busy',
    message: string,
  ) {
    super(code, 409, message);
  }
}

/**
 * The request cannot be processed as sent: malformed JSON, wrong media type, too large (its
 * body, or the work its query would take).
 */
export class RequestError extends TagdError {
  constructor(
    code:
      | 'bad-request'
      | 'payload-too-large'
      | 'query-too-large'
      | 'unsupported-media-type'
      | 'method-not-allowed'
      | 'not-implemented'
      | 'headers-too-large'
      | 'request-timeout'
      | 'expectation-failed',
    status: 400 | 413 | 415 | 405 | 501 | 431 | 408 | 417,
    message: string,
  ) {
    super(code, status, message);
  }
}

/**
 * A shared resource stayed busy (e.g. the accounts lock, the large request bodies' memory); the
 * client may retry (HTTP 503, with Retry-After when `retryAfterSeconds` is given).
 */
export class ServiceBusyError extends TagdError {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super('busy', 503, message);
  }
}

/** The history backend cannot be read (e.g. PostgreSQL unreachable); retry later (HTTP 503). */
export class HistoryUnavailableError extends TagdError {
  constructor() {
    super(
      'history-unavailable',
      503,
      'The history store cannot be read right now; the gateway logs the cause. Retry shortly.',
    );
  }
}

/**
 * The alarm journal cannot be written (a full or failing disk): an operator action on an alarm
 * is not taken, since it could not be kept (HTTP 503).
 */
export class AlarmJournalUnavailableError extends TagdError {
  constructor(options?: ErrorOptions) {
    super(
      'alarm-journal-unavailable',
      503,
      'The alarm journal cannot be written right now, so the action was not taken; the gateway logs the cause. Retry shortly.',
      options,
    );
  }
}

/**
 * The chat's model (profile `assistant.model`) did not answer: unreachable, an HTTP error, a
 * broken stream (502 `assistant-unavailable`), or nothing within `timeoutMs` (504
 * `assistant-timeout`). The message names no secret (never the API key).
 */
export class AssistantUnavailableError extends TagdError {
  constructor(code: 'assistant-unavailable' | 'assistant-timeout', message: string) {
    super(code, code === 'assistant-timeout' ? 504 : 502, message);
  }
}

/** Stand-in for an error tagd did not raise on purpose; clients see only this, never internals. */
export class InternalError extends TagdError {
  constructor() {
    super('internal', 500, 'An unexpected error occurred; it has been logged.');
  }
}

/**
 * Every stable error code with its HTTP status and meaning. The error table of docs/errors.md is
 * checked against this list, so adding an error class means adding a row here and there.
 */
export const errorCodes = {
  'bad-request': { status: 400, meaning: 'The request is malformed (e.g. unparsable JSON).' },
  'payload-too-large': { status: 413, meaning: 'The request body is over the size limit.' },
  'query-too-large': {
    status: 413,
    meaning: 'A query set would cost more tag matches, or hold more Delta entries, than allowed.',
  },
  'unsupported-media-type': { status: 415, meaning: 'The request body is not JSON.' },
  'validation-failed': { status: 400, meaning: 'A request or document failed validation.' },
  'credentials-refused': {
    status: 400,
    meaning:
      'The password or two-factor code confirming an action of the signed-in account is wrong (`errors` names the field); the session is still valid.',
  },
  'expression-invalid': {
    status: 400,
    meaning:
      'An expression does not parse or check; `errors` gives its line, column and what was expected.',
  },
  'dbc-invalid': {
    status: 400,
    meaning: 'A DBC file is malformed or a signal does not fit its message.',
  },
  'invalid-tag-path': { status: 400, meaning: 'A tag path breaks the path rules.' },
  'tag-not-found': { status: 404, meaning: 'No tag with that path exists.' },
  'collection-not-found': { status: 404, meaning: 'No collection with that name exists.' },
  'method-not-allowed': { status: 405, meaning: 'The route exists but not for this method.' },
  'not-implemented': {
    status: 501,
    meaning: 'The HTTP method is not one the API knows (e.g. PROPFIND).',
  },
  'not-found': { status: 404, meaning: 'No such route or resource.' },
  'headers-too-large': {
    status: 431,
    meaning: 'The request headers are over 16 KiB; the connection is closed.',
  },
  'request-timeout': {
    status: 408,
    meaning: 'The request did not arrive in time; the connection is closed.',
  },
  'expectation-failed': {
    status: 417,
    meaning: 'The Expect header asks for something other than 100-continue.',
  },
  'profile-not-found': { status: 500, meaning: 'The profile file was not found.' },
  'profile-corrupt': { status: 500, meaning: 'The profile file is not valid JSON.' },
  'profile-invalid': { status: 400, meaning: 'The profile breaks the schema.' },
  'secret-key-unusable': { status: 500, meaning: 'The sealing key cannot be used.' },
  'secret-unseal-failed': { status: 500, meaning: 'A sealed secret cannot be opened.' },
  'driver-unavailable': { status: 500, meaning: 'A driver type is unknown or failed to load.' },
  'listener-failed': { status: 500, meaning: 'A listener is refused or cannot bind.' },
  'profile-file-unusable': {
    status: 500,
    meaning: 'A file the profile names is missing, unreadable, not a regular file or too large.',
  },
  'state-dir-locked': {
    status: 500,
    meaning: 'Another tagd daemon runs on the same state directory.',
  },
  'state-dir-unusable': {
    status: 500,
    meaning: 'The state directory cannot be created or written (permissions, read-only).',
  },
  unauthorized: {
    status: 401,
    meaning: 'Missing, invalid, expired or revoked token or credentials.',
  },
  forbidden: { status: 403, meaning: 'The account lacks the permission the route needs.' },
  'feature-unavailable': {
    status: 403,
    meaning: 'The feature needs an edition this installation is not licensed for.',
  },
  'csrf-failed': {
    status: 403,
    meaning: 'A cookie session sent an unsafe request without the CSRF header.',
  },
  'too-many-requests': {
    status: 429,
    meaning: 'Too many failed sign-ins, or expression tests; see Retry-After.',
  },
  'query-capacity-reached': {
    status: 429,
    meaning:
      'Query sets hold the most Delta bookkeeping allowed, or the most query requests run at once; see Retry-After.',
  },
  'stream-capacity-reached': {
    status: 429,
    meaning:
      'The account, or the gateway, has the most event streams (tags, alarms) open that it allows; see Retry-After.',
  },
  'write-rate-exceeded': {
    status: 429,
    meaning: 'The account wrote more tag values per second than allowed; see Retry-After.',
  },
  'history-not-configured': {
    status: 409,
    meaning: 'A Logged binding needs a history store in the profile.',
  },
  'already-exists': { status: 409, meaning: 'A resource with that name exists.' },
  'limit-reached': {
    status: 409,
    meaning: 'A per-account limit (e.g. 100 query sets) is reached.',
  },
  'last-administrator': {
    status: 409,
    meaning: 'The change would leave no enabled administrator who can sign in.',
  },
  'two-factor-state': {
    status: 409,
    meaning:
      'Self-service two-factor: no enrolment is pending (none started, expired after 10 minutes, or voided by five wrong codes), two-factor is already enrolled (remove it first), or there is none to remove.',
  },
  'alarm-state-conflict': {
    status: 409,
    meaning:
      'The alarm is not in a state the action applies to (nothing to acknowledge, not shelved, already out of service).',
  },
  'proposal-not-pending': {
    status: 409,
    meaning:
      'The assistant proposal was already confirmed or rejected, or has expired; nothing was done.',
  },
  'assistant-not-configured': {
    status: 409,
    meaning: 'The chat needs a model: the profile has no `assistant.model`.',
  },
  'conversation-busy': {
    status: 409,
    meaning:
      'The chat conversation is still answering the previous message; send the next once that answer has ended.',
  },
  busy: { status: 503, meaning: 'A shared resource stayed busy; retry shortly.' },
  'history-unavailable': {
    status: 503,
    meaning: 'The history store cannot be read right now (e.g. its database is down).',
  },
  'alarm-journal-unavailable': {
    status: 503,
    meaning:
      'The alarm journal cannot be written (e.g. a full disk); the alarm action was not taken.',
  },
  'assistant-unavailable': {
    status: 502,
    meaning: 'The chat’s model could not be reached, answered an error, or broke its answer off.',
  },
  'assistant-timeout': {
    status: 504,
    meaning: 'The chat’s model did not answer within `assistant.model.timeoutMs`.',
  },
  internal: { status: 500, meaning: 'An unexpected error (details in the log only).' },
} as const satisfies Record<string, { status: number; meaning: string }>;

/** Stable error code. */
export type ErrorCode = keyof typeof errorCodes;

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
