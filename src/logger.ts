import { createRequire } from 'node:module';
import { type DestinationStream, type Logger, pino } from 'pino';
import type PinoPretty from 'pino-pretty';

// pino-pretty (CommonJS) is required only for a terminal: a service logging JSON lines to
// journald never loads it (about 40 ms of CPU at start).
const require = createRequire(import.meta.url);

/** Keys whose values are masked wherever they appear in a logged object. */
export const secretKeys = [
  'password',
  'currentPassword',
  'newPassword',
  'passwordHash',
  'token',
  'refreshToken',
  'preAuthToken',
  'bearerToken',
  'apiKeyHeaderValue',
  'basicAuthPassword',
  'destinationUrl',
  'brokerUrl',
  'signingSecret',
  'keyPassphrase',
  'sealedSecret',
  'authorization',
  'Authorization',
  'cookie',
  'Cookie',
  'set-cookie',
  'Set-Cookie',
];

/** What a masked secret reads as in a log line. */
export const secretCensor = '********';
/** Deepest level whose keys are masked: the top level is 0 (an array counts as a level). */
export const maskedDepth = 4;
const secretKeySet: ReadonlySet<string> = new Set(secretKeys);
/** pino redaction paths of the secret keys at the top level (no wildcards: see below). */
const topLevelSecretPaths = secretKeys.map((key) =>
  /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`,
);

/**
 * `value` with the value of every {@link secretKeys} key masked, at the top level and up to
 * {@link maskedDepth} levels deep in plain objects and arrays; objects are copied only where a
 * secret is masked, so a line without secrets costs a walk and no copy. Objects that hold secrets
 * under names chosen by users (an API key header's name) must be masked with maskSecrets before
 * logging.
 *
 * Decision: this walk, as pino's `formatters.log`, instead of pino's `redact` with a wildcard
 * path per key and depth (105 paths): fast-redact's wildcard paths cost about 265 µs a line,
 * which every audited write and assistant tool call paid; the walk costs about a microsecond.
 */
export function maskSecretKeys<T>(value: T, depth = 0): T {
  if (depth > maskedDepth || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const masked = maskSecretKeys(item, depth + 1);
      if (masked !== item) {
        copy ??= value.slice();
        copy[index] = masked;
      }
    }
    return (copy ?? value) as T;
  }
  const prototype = Object.getPrototypeOf(value);
  // Errors, buffers and other class instances are left to pino's serializers.
  if (prototype !== Object.prototype && prototype !== null) return value;
  const record = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const masked =
      secretKeySet.has(key) && item !== undefined ? secretCensor : maskSecretKeys(item, depth + 1);
    if (masked !== item) {
      copy ??= { ...record };
      copy[key] = masked;
    }
  }
  return (copy ?? value) as T;
}

/** The levels `TAGD_LOG_LEVEL` accepts, most verbose first; `silent` logs nothing. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * Checks a `TAGD_LOG_LEVEL` value. Empty counts as unset (`info`): systemd's
 * `Environment=TAGD_LOG_LEVEL=` and a shell's `TAGD_LOG_LEVEL=` mean "no level given".
 * @returns undefined when valid (or unset or empty), else a message that lists the valid levels.
 */
export function logLevelProblem(level: string | undefined): string | undefined {
  if (!level || (logLevels as readonly string[]).includes(level)) return undefined;
  return `TAGD_LOG_LEVEL '${level}' is not a log level; use one of: ${logLevels.join(', ')}.`;
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level. Default: `TAGD_LOG_LEVEL`, or `info` when that is unset or empty. */
  level?: string;
  /** Human-readable lines instead of JSON. Default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go. Default: stdout. */
  destination?: DestinationStream;
  /**
   * Also receives every line of level info and above as JSON (after redaction): the console's
   * event view keeps the audit lines, warnings and errors of it (recent-events.ts).
   */
  recentEvents?: DestinationStream;
}

/**
 * The daemon's logger: pino JSON lines (one object a line, for journald and log shippers), or
 * colored lines on a terminal. Secrets are masked as `********` by key wherever they appear.
 * @throws RangeError listing the valid levels when the level is not one of {@link logLevels}
 *   (the CLI checks `TAGD_LOG_LEVEL` first and exits 78 with that message).
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  // `||`, not `??`: an empty level (given or from the environment) means the default.
  const level = options.level || process.env.TAGD_LOG_LEVEL || 'info';
  const problem = logLevelProblem(level);
  if (problem !== undefined) throw new RangeError(problem);
  const usePretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const destination =
    options.destination ??
    (usePretty
      ? (require('pino-pretty') as typeof PinoPretty)({
          colorize: true,
          sync: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : pino.destination({ fd: 1, sync: true }));
  const settings = {
    level,
    base: { pid: process.pid },
    // Secrets masked by key: in the logged object at every depth by maskSecretKeys, and by
    // pino's redaction at the top level, which also covers child bindings (pino formats those
    // without the root's formatters). Top-level paths cost pino about 3 µs a line.
    formatters: { log: (object: Record<string, unknown>) => maskSecretKeys(object) },
    redact: { paths: topLevelSecretPaths, censor: secretCensor },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.recentEvents === undefined || level === 'silent') return pino(settings, destination);
  // multistream hands each stream the JSON line, before any pretty-printing of the terminal's.
  return pino(
    settings,
    pino.multistream([
      { level: level as pino.Level, stream: destination },
      { level: 'info', stream: options.recentEvents },
    ]),
  );
}
