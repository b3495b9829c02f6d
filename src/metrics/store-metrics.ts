/**
 * Tag store series, read from the store when scraped: the store itself only keeps a running
 * number, so a write pays one addition per batch and no metric call.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { TagStore } from '../tags/tag-store.js';

/** Registers `tagd_store_tags` and `tagd_store_updates_total`. */
export function registerStoreMetrics(registry: Registry, store: TagStore): void {
  new Gauge({
    name: 'tagd_store_tags',
    help: 'Tags in the tag store (driver tags and health tags).',
    registers: [registry],
    collect() {
      this.set(store.size);
    },
  });
  new Counter({
    name: 'tagd_store_updates_total',
    help: 'Samples written to the tag store: driver readings, first placeholders and Stale marks.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(store.updates);
    },
  });
}
