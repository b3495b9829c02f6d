/**
 * Tag write series, pushed by the TagWriter through its {@link TagWriteMetrics} port, one item
 * at a time (writes are rate-limited per account, so this is never a hot path). No label names a
 * tag or an account: the audit log has those.
 */
import { Counter, type Registry } from 'prom-client';
import type { TagWriteMetrics } from '../tags/tag-writer.js';

const statuses = ['Good', 'Bad', 'Uncertain', 'Refused'] as const;

/** Registers `tagd_tag_writes_total`; returns the writer's port. */
export function registerWriteMetrics(registry: Registry): TagWriteMetrics {
  const writes = new Counter({
    name: 'tagd_tag_writes_total',
    help: 'Tag write items answered, by status: Good, Bad, Uncertain (the device may have taken it), Refused (checks, rate limit; nothing sent).',
    labelNames: ['status'],
    registers: [registry],
  });
  // Every status from the start, so rate() and alerts see a 0 rather than no series.
  for (const status of statuses) writes.inc({ status }, 0);
  return { written: (status) => writes.inc({ status }) };
}
