/**
 * Composition root of the running daemon and the only place that calls process.exit: it owns
 * the signals, logs an unhandled rejection (tagd keeps running), turns an uncaught exception
 * into a logged shutdown, and maps failures to exit codes.
 */
import type { Logger } from 'pino';
import { Daemon, type DaemonOptions } from './daemon.js';
import {
  ListenerError,
  ProfileFileError,
  ProfileInvalidError,
  ServiceBusyError,
  TagdError,
} from './errors.js';
import { exitCodes } from './exit-codes.js';
import { SystemdNotifier } from './systemd/notifier.js';

export { exitCodes };

/**
 * How long a stop may take before the process exits anyway, ms. Room for a Sparkplug host's
 * drain (its `stopDrainMs`, 5 s by default) and the history's last append after it; the systemd
 * unit's TimeoutStopSec (30 s) stays above it.
 */
export const stopDeadlineMs = 20_000;

/** Called with the daemon before it starts, to subscribe to it (e.g. {@link Daemon.onReload}). */
export type DaemonSetup = (daemon: Daemon) => void;

/**
 * Runs the daemon until SIGTERM or SIGINT, then stops it in reverse order within
 * {@link stopDeadlineMs} and exits. A second signal exits at once. SIGHUP (`systemctl reload
 * tagd`) re-reads the profile: only what changed restarts, and a refused profile is logged with
 * every error while the running configuration stays; it never stops the daemon.
 * @param setup called with the daemon before it starts: where systemd notification subscribes
 *   to {@link Daemon.onReload} (`RELOADING=1` on `start`, `READY=1` on `end`).
 */
export async function runDaemon(options: DaemonOptions, setup?: DaemonSetup): Promise<void> {
  const { logger } = options;
  const daemon = new Daemon(options);
  setup?.(daemon);
  // Type=notify: READY=1, STOPPING=1, RELOADING=1 and the watchdog (no-ops outside systemd).
  const notifier = new SystemdNotifier({ logger: logger.child({ component: 'systemd' }) });
  let stopping = false;
  let ready = false;

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
    await notifier.stopping();
    await daemon.stop();
    logger.info('stopped');
    logger.flush?.();
    process.exit(code);
  };

  process.on('SIGTERM', () => void shutdown('SIGTERM', exitCodes.ok));
  process.on('SIGINT', () => void shutdown('SIGINT', exitCodes.ok));
  // `systemctl reload` (the unit's ExecReload) sends SIGHUP, whose default action would end
  // the process. notifier.reload() brackets the reload with RELOADING=1 and READY=1 (with a
  // STATUS line when the profile was refused). The reloader logs the outcome, every error of a
  // refused profile included; a reload that fails must not become an unhandled rejection, which
  // would stop the daemon.
  process.on('SIGHUP', () => {
    // Before READY=1 a reload's READY=1 would tell systemd the start-up is done.
    if (!ready || stopping) {
      logger.warn('reload requested (SIGHUP) while starting or stopping: ignored');
      return;
    }
    notifier
      .reload(() => daemon.reload('signal'))
      .catch((error: unknown) => {
        // The reloader logged every other failure; this one it refused before reading anything.
        if (error instanceof ServiceBusyError) {
          logger.warn('reload requested (SIGHUP) while starting or stopping: ignored');
        }
      });
  });
  // Every component catches its own failures and reports them in its status (a driver Failed,
  // a publisher Off with a reason). A rejection that still escapes is a promise chain nobody
  // waits for: it is logged with its stack and the gateway keeps running, because ending the
  // process over one component would stop every other one, and a failure that comes back with
  // the same profile would keep systemd restarting it forever.
  process.on('unhandledRejection', (reason) => {
    logger.error(
      { err: reason },
      'unhandled promise rejection (a bug: please report it); tagd keeps running',
    );
  });
  // An exception interrupted code halfway: the state it left is unknown, so it is logged with
  // its stack and ends the process through an orderly stop; systemd restarts a daemon in a
  // known state.
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void shutdown('uncaughtException', exitCodes.failure);
  });

  // From the start: a start-up stuck in a busy loop is caught too (TimeoutStartSec= aside).
  notifier.startWatchdog();
  try {
    await daemon.start();
    // After the listeners are up: units ordered After=tagd.service may call the API at once.
    ready = true;
    await notifier.ready();
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

/**
 * Error codes a restart cannot fix: the profile, a file it names, the sealing key, or another
 * daemon on the state directory. tagd exits 78 (EX_CONFIG) on them, which the systemd unit does
 * not restart.
 */
export const configErrorCodes: ReadonlySet<string> = new Set([
  'profile-not-found',
  'profile-corrupt',
  'profile-invalid',
  'profile-file-unusable',
  'secret-key-unusable',
  'secret-unseal-failed',
  'state-dir-locked',
  'state-dir-unusable',
]);

/**
 * True when restarting cannot fix a start-up failure (exit 78), false when it may (exit 1).
 * A listener that cannot bind counts as configuration only for EACCES (a privileged port
 * without the capability stays refused); EADDRINUSE (a previous instance still closing, another
 * program) and EADDRNOTAVAIL (an address not yet on this host) may clear, so systemd retries.
 */
export function isConfigError(error: unknown): boolean {
  if (!(error instanceof TagdError)) return false;
  if (configErrorCodes.has(error.code)) return true;
  if (error instanceof ListenerError) {
    const cause = error.cause;
    return cause instanceof ProfileFileError || (cause as { code?: unknown })?.code === 'EACCES';
  }
  return false;
}
