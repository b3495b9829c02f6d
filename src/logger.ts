import { type DestinationStream, type Logger, pino } from 'pino';
import pretty from 'pino-pretty';

/** What is masked in every log line, wherever it appears in a logged object. */
export const redactedPaths = [
  'password',
  '*.password',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'bearerToken',
  '*.bearerToken',
  'apiKeyHeaderValue',
  '*.apiKeyHeaderValue',
  'basicAuthPassword',
  '*.basicAuthPassword',
  'destinationUrl',
  '*.destinationUrl',
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** pino level. Default: `TAGD_LOG_LEVEL` or `info`. */
  level?: string;
  /** Human-readable lines instead of JSON. Default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go. Default: stdout. */
  destination?: DestinationStream;
}

/**
 * The daemon's logger: pino JSON lines (one object a line, for journald and log shippers), or
 * colored lines on a terminal. Secrets are masked as `********` by key wherever they appear.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.TAGD_LOG_LEVEL ?? 'info';
  const usePretty = options.pretty ?? Boolean(process.stdout.isTTY);
  const destination =
    options.destination ??
    (usePretty
      ? pretty({
          colorize: true,
          sync: true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
        })
      : pino.destination({ fd: 1, sync: true }));
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: redactedPaths, censor: '********' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
