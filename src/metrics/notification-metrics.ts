/**
 * Alarm e-mail series, read from the notifier when scraped: its status, the messages sent and
 * dropped, the attempts retried, and the messages waiting.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { EmailNotifierState, NotifierStatus } from '../notifications/email-notifier.js';
import { perScrape } from './per-scrape.js';

/** What the series read. */
export interface NotificationSource {
  state(): EmailNotifierState;
}

const statuses: readonly NotifierStatus[] = ['On', 'Off', 'Error'];

/** Registers the series; `source()` is asked at each scrape (undefined: none yet). */
export function registerNotificationMetrics(
  registry: Registry,
  source: () => NotificationSource | undefined,
): void {
  const registers = [registry];
  const read = perScrape(() => source()?.state());
  new Gauge({
    name: 'tagd_notification_email_status',
    help: 'Alarm e-mail status, 1 for the current one: On, Off (no notifications section), Error (the last attempt failed, or the SMTP server refused the settings).',
    labelNames: ['status'],
    registers,
    collect() {
      this.reset();
      const state = read();
      if (state === undefined) return;
      for (const status of statuses) this.set({ status }, state.status === status ? 1 : 0);
    },
  });
  new Counter({
    name: 'tagd_notification_emails_total',
    help: 'Alarm e-mail messages by outcome: sent (the SMTP server accepted it), failed (dropped after every attempt failed, or the queue was full).',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      const state = read();
      if (state === undefined) return;
      this.inc({ outcome: 'sent' }, state.sent);
      this.inc({ outcome: 'failed' }, state.failed);
    },
  });
  new Counter({
    name: 'tagd_notification_email_retries_total',
    help: 'Alarm e-mail attempts that failed and were tried again.',
    registers,
    collect() {
      this.reset();
      const state = read();
      if (state !== undefined) this.inc(state.retries);
    },
  });
  new Gauge({
    name: 'tagd_notification_email_queue_depth',
    help: 'Alarm e-mail messages waiting to be sent (retries included).',
    registers,
    collect() {
      this.set(read()?.queued ?? 0);
    },
  });
}
