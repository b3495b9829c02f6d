import type { Logger } from 'pino';

/**
 * Runs a subscriber callback so that its failure cannot break the caller or starve the other
 * subscribers: the error is logged, or, with no logger, rethrown on a later tick where the
 * process-wide handler reports it.
 */
export function callSafely(call: () => void, logger: Logger | undefined, what: string): void {
  try {
    call();
  } catch (error) {
    if (logger) logger.error({ err: error }, what);
    else
      queueMicrotask(() => {
        throw error;
      });
  }
}
