/**
 * What a webhook publisher logs about failed deliveries. A receiver that is down fails every
 * batch, every Update Interval, for as long as it is down: logging each attempt (or each batch)
 * would bury the rest of the log. So the log follows the state instead:
 * - the first failed delivery, On → Error: one error line with the reason;
 * - while the outage lasts: a summary at most once per {@link outageSummaryIntervalMs}
 *   ("still failing: N failed deliveries since T …"), plus at most one line per interval when the
 *   reason changes (connection refused → HTTP 401 means something else is wrong now);
 * - the first delivery that succeeds, Error → On: one line with the outage's totals;
 * - a stop during an outage: its totals go on the stop line.
 * Each failed attempt is logged at debug level only. Times are the deliveries' end times, read on
 * the publisher's injected clock, so the one-minute spacing is tested without waiting.
 */
import type { Logger } from 'pino';
import { deliveryAttempts, isCredentialRejection } from './delivery.js';

/** Least time between two "still failing" summaries of one outage, ms. */
export const outageSummaryIntervalMs = 60_000;

/** One failed delivery, as the publisher reports it. */
export interface FailedDelivery {
  /** Clock time the delivery ended, epoch ms. */
  at: number;
  /** Attempts made. */
  attempts: number;
  /** Why the last attempt failed (never the URL or a credential). */
  error: string;
  /** The receiver's HTTP status in the last answer, if any. */
  httpStatus?: number;
  /** Why each attempt failed, in order. */
  errors: string[];
  /** Samples in the dropped batch. */
  samples: number;
  /** The batch's id. */
  batchId: string;
  /** The batch was kept in the outbox (storeAndForward) rather than dropped. */
  kept?: boolean;
}

interface Outage {
  /** Clock time the first failed delivery ended. */
  since: number;
  deliveries: number;
  attempts: number;
  samples: number;
  lastError: string;
  /** The reason the log last named. */
  loggedError: string;
  /** Clock time of the last line about this outage. */
  loggedAt: number;
  /** Clock time of the last line announcing a new reason; −∞ before the first. */
  changeLoggedAt: number;
}

/** The outage log of one publisher. */
export class OutageLog {
  private outage: Outage | undefined;

  /**
   * @param name the publisher's name, for the messages.
   * @param log the publisher's logger.
   */
  constructor(
    private readonly name: string,
    private readonly log: Logger,
  ) {}

  /** True between a failed delivery and the next successful one (or a reset). */
  get failing(): boolean {
    return this.outage !== undefined;
  }

  /** A failed attempt that another will follow: debug level only. */
  retrying(attempt: number, error: string, httpStatus: number | undefined, waitMs: number): void {
    this.log.debug(
      { attempt, httpStatus },
      `Webhook attempt ${attempt} of ${deliveryAttempts} to the destination failed (${error}); ` +
        `trying again in ${waitMs / 1000} s.`,
    );
  }

  /** A delivery failed after its attempts; its batch was dropped. */
  failed(delivery: FailedDelivery): void {
    const fields = {
      batchId: delivery.batchId,
      attempts: delivery.attempts,
      httpStatus: delivery.httpStatus,
      errors: delivery.errors,
    };
    const outage = this.outage;
    if (outage === undefined) {
      this.outage = {
        since: delivery.at,
        deliveries: 1,
        attempts: delivery.attempts,
        samples: delivery.samples,
        lastError: delivery.error,
        loggedError: delivery.error,
        loggedAt: delivery.at,
        changeLoggedAt: Number.NEGATIVE_INFINITY,
      };
      this.log.error(
        fields,
        `Webhook publisher '${this.name}': delivery to the destination failed after ` +
          `${delivery.attempts} attempts (${delivery.error}); the batch of ${delivery.samples} ` +
          `samples was ${delivery.kept ? 'kept in the outbox to be sent again' : 'dropped'}; ` +
          `status Error.${credentialHint(delivery.httpStatus)} Until a ` +
          'delivery succeeds, failures are summarized at most once a minute.',
      );
      return;
    }
    outage.deliveries++;
    outage.attempts += delivery.attempts;
    outage.samples += delivery.samples;
    outage.lastError = delivery.error;
    const at = delivery.at;
    if (
      delivery.error !== outage.loggedError &&
      at - outage.changeLoggedAt >= outageSummaryIntervalMs
    ) {
      outage.changeLoggedAt = at;
      this.summary(outage, at, fields, 'now', delivery.httpStatus);
    } else if (at - outage.loggedAt >= outageSummaryIntervalMs) {
      this.summary(outage, at, fields, 'last', delivery.httpStatus);
    }
  }

  /** A delivery succeeded: ends an outage with one line of its totals. */
  recovered(httpStatus: number | undefined): void {
    const outage = this.outage;
    if (outage === undefined) return;
    this.outage = undefined;
    this.log.info(
      { failedDeliveries: outage.deliveries, attempts: outage.attempts, since: iso(outage.since) },
      `Webhook publisher '${this.name}' delivered again (HTTP ${httpStatus}) after ` +
        `${totals(outage)}; status On.`,
    );
  }

  /**
   * Ends the outage record without a line (the publisher stopped or restarts).
   * @returns the outage's totals in words, for the stop line; undefined when none.
   */
  reset(): string | undefined {
    const outage = this.outage;
    this.outage = undefined;
    return outage === undefined ? undefined : totals(outage);
  }

  private summary(
    outage: Outage,
    at: number,
    fields: Record<string, unknown>,
    which: 'now' | 'last',
    httpStatus: number | undefined,
  ): void {
    outage.loggedAt = at;
    outage.loggedError = outage.lastError;
    const reason =
      which === 'now'
        ? `now with a different error (${outage.lastError})`
        : `last error (${outage.lastError})`;
    this.log.warn(
      {
        ...fields,
        failedDeliveries: outage.deliveries,
        totalAttempts: outage.attempts,
        since: iso(outage.since),
      },
      `Webhook publisher '${this.name}' still failing, ${reason}: ${totals(outage)}; ` +
        `status Error.${credentialHint(httpStatus)}`,
    );
  }
}

function totals(outage: Outage): string {
  const deliveries =
    outage.deliveries === 1 ? '1 failed delivery' : `${outage.deliveries} failed deliveries`;
  return (
    `${deliveries} (${outage.attempts} attempts) since ${iso(outage.since)}, ` +
    `${outage.samples} samples dropped`
  );
}

function credentialHint(httpStatus: number | undefined): string {
  return isCredentialRejection(httpStatus)
    ? ' The receiver refused the request as unauthorized: the credential is likely wrong; ' +
        'check the publisher\u2019s authentication settings.'
    : '';
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
