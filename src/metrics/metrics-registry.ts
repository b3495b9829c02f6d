/**
 * The one prom-client registry of a tagd process and what every scrape starts with: Node.js
 * and process metrics (event-loop lag, heap, GC, CPU, memory, file descriptors) under their
 * usual names, so ready-made Node.js dashboards work, and `tagd_build_info`. tagd's own
 * series (`tagd_` prefix) are added by the collectors of this folder, each handed this
 * registry; components never import prom-client themselves, they get a small port.
 */
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

/** Options of {@link MetricsRegistry}. */
export interface MetricsRegistryOptions {
  /** tagd's version, the `version` label of `tagd_build_info`. */
  version: string;
  /**
   * Collect the Node.js and process metrics. Default true. They start an event-loop delay
   * monitor and a GC observer for the life of the process, which unit tests need not.
   */
  processMetrics?: boolean;
}

/** Prometheus text exposition of a scrape. */
export interface Exposition {
  /** The `Content-Type` of the body (text format 0.0.4). */
  contentType: string;
  body: string;
}

/** The registry every tagd collector registers in, and its exposition. */
export class MetricsRegistry {
  /** The prom-client registry; collectors of src/metrics/ register their metrics here. */
  readonly registry = new Registry();

  constructor(options: MetricsRegistryOptions) {
    if (options.processMetrics ?? true) {
      // 10 ms resolution (prom-client's default) is fine for lag that matters to polling.
      collectDefaultMetrics({ register: this.registry });
    }
    const buildInfo = new Gauge({
      name: 'tagd_build_info',
      help: 'Always 1; the version label names the running tagd.',
      labelNames: ['version'],
      registers: [this.registry],
    });
    buildInfo.set({ version: options.version }, 1);
  }

  /** Every series now, in the Prometheus text format; collectors compute on this call. */
  async exposition(): Promise<Exposition> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
