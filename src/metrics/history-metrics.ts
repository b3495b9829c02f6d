/**
 * History logger series, read from its counters when scraped: appends, drops and rejections
 * are counted by the logger anyway, so the hot path gains nothing.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { HistoryLoggerStats } from '../history/history-logger.js';
import { perScrape } from './per-scrape.js';

/** Where the history series are read from: the running history's counters. */
export interface HistoryStatsSource {
  /** Undefined while no history runs (the profile has none): then there are no series. */
  stats(): HistoryLoggerStats | undefined;
}

/** Registers the `tagd_history_…` series. */
export function registerHistoryMetrics(registry: Registry, source: HistoryStatsSource): void {
  const registers = [registry];
  const stats = perScrape(() => source.stats());
  new Gauge({
    name: 'tagd_history_buffered_samples',
    help: 'Samples waiting in memory for the next append (grows while the backend is slow or down; bounded by history.bufferLimit).',
    registers,
    collect() {
      this.reset();
      const now = stats();
      if (now !== undefined) this.set(now.buffered);
    },
  });
  const counters: [string, string, keyof HistoryLoggerStats][] = [
    ['tagd_history_appended_samples_total', 'Samples stored by the history backend.', 'appended'],
    [
      'tagd_history_dropped_samples_total',
      'Samples dropped because the buffer was full (backend slow or down).',
      'dropped',
    ],
    [
      'tagd_history_rejected_samples_total',
      'Samples the database refused for their data, dropped and logged.',
      'rejected',
    ],
    [
      'tagd_history_failed_appends_total',
      'Appends that failed (an outage); their samples stayed buffered to be retried.',
      'failedAppends',
    ],
    ['tagd_history_transactions_total', 'Append transactions committed.', 'transactions'],
  ];
  for (const [name, help, key] of counters) {
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        const now = stats();
        if (now !== undefined) this.inc(now[key]);
      },
    });
  }
}
