/**
 * Composition root of the running daemon and the only place that calls process.exit: it owns
 * the signals, turns unhandled errors into a logged shutdown, and maps failures to exit codes.
 */
import type { Logger } from 'pino';
import { Daemon, type DaemonOptions } from './daemon.js';
import { ProfileInvalidError, TagdError } from './errors.js';

/** Exit codes of `tagd start`. */
export const exitCodes = {
  ok: 0,
  /** A runtime failure, or a stop that overran its deadline. */
  failure: 1,
  /** The profile is missing, corrupt or invalid (sysexits EX_CONFIG): restarting will not help. */
  config: 78,
} as const;

/** How long a stop may take before the process exits anyway, ms. */
export const stopDeadlineMs = 10_000;

/**
 * Runs the daemon until SIGTERM or SIGINT, then stops it in reverse order within
 * {@link stopDeadlineMs} and exits. A second signal exits at once.
 */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { logger } = options;
  const daemon = new Daemon(options);
  let stopping = false;

  const shutdown = async (reason: string, code: number) => {
    if (stopping) {
      logger.warn({ reason }, 'second stop request: exiting now');
      process.exit(exitCodes.failure);
    }
    stopping = true;
    logger.info({ reason }, 'stopping');
    const deadline = setTimeout(() => {
      logger.error({ deadlineMs: stopDeadlineMs }, 'stop overran its deadline: exiting');
      process.exit(exitCodes.failure);
    }, stopDeadlineMs);
    deadline.unref();
    await daemon.stop();
    logger.info('stopped');
    logger.flush?.();
    process.exit(code);
  };

  process.on('SIGTERM', () => void shutdown('SIGTERM', exitCodes.ok));
  process.on('SIGINT', () => void shutdown('SIGINT', exitCodes.ok));
  // Nothing is swallowed: an error nobody handled is logged with its stack and ends the process
  // through an orderly stop, so systemd restarts a daemon in a known state.
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void shutdown('uncaughtException', exitCodes.failure);
  });
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    void shutdown('unhandledRejection', exitCodes.failure);
  });

  try {
    await daemon.start();
  } catch (error) {
    reportStartFailure(logger, error);
    logger.flush?.();
    process.exit(isConfigError(error) ? exitCodes.config : exitCodes.failure);
  }
}

function reportStartFailure(logger: Logger, error: unknown): void {
  if (error instanceof ProfileInvalidError) {
    logger.fatal({ code: error.code, errors: error.errors }, error.message);
    for (const problem of error.errors) logger.fatal(`  ${problem.path}: ${problem.message}`);
  } else if (error instanceof TagdError) {
    logger.fatal({ code: error.code }, error.message);
  } else {
    logger.fatal({ err: error }, 'start-up failed');
  }
}

function isConfigError(error: unknown): boolean {
  return (
    error instanceof TagdError &&
    ['profile-not-found', 'profile-corrupt', 'profile-invalid'].includes(error.code)
  );
}
