/**
 * Opening a publisher's durable outbox (MQTT json formats and Sparkplug store-and-forward,
 * webhook storeAndForward) when it starts: the same for every kind of publisher.
 */
import type { Logger } from 'pino';
import { Outbox, type OutboxOptions } from '../outbox/outbox.js';

/** The reason a publisher gives (Error, not running) when its outbox cannot be opened. */
export const outboxUnusableReason =
  'The outbox in the state directory could not be opened; the gateway log says why.';

/**
 * Opens the outbox of a publisher that is starting. When the file cannot be opened the error
 * goes to the log and the answer is undefined: the publisher does not start, and records
 * {@link outboxUnusableReason} as its Error reason.
 * @param publisher how the log names it, e.g. `MQTT publisher 'line1'`
 */
export function openPublisherOutbox(
  options: OutboxOptions,
  log: Logger,
  publisher: string,
): Outbox | undefined {
  const outbox = new Outbox(options);
  try {
    outbox.open();
  } catch (error) {
    log.error({ err: error }, `${publisher} cannot start: its outbox cannot be opened.`);
    return undefined;
  }
  return outbox;
}
