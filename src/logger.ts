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

/**
 * pino redaction paths: every secret key at the top level and up to four levels deep (pino's
 * `*` matches one level, so each depth is listed). Objects that hold secrets under names chosen
 * by users (an API key header's name) must be masked with maskSecrets before logging.
 */
export const redactedPaths = secretKeys.flatMap((key) =>
  ['', '*', '*.*', '*.*.*', '*.*.*.*'].map((stars) => {
    if (/^[A-Za-z_$][\w$]*$/.test(key)) return stars === '' ? key : `${stars}.${key}`;
    return `${stars}["${key}"]`;
  }),
);

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
    redact: { paths: redactedPaths, censor: '********' },
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
