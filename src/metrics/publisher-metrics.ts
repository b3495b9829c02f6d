/**
 * Per-publisher series. Status, delivery counts and queues are read from the publishers when
 * scraped; delivery durations are pushed through the {@link PublisherMetrics} port, once per
 * delivery. Labels: `publisher` (its name), `type` (`webhook`, `mqtt`) and, for
 * deliveries, `outcome` (`success`, `failure`).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type {
  PublisherMetrics,
  PublisherQueue,
  PublisherState,
  PublisherStatus,
} from '../publishers/publisher.js';
import { perScrape } from './per-scrape.js';

/** One kind of publisher as the metrics read it. */
export interface PublisherSource {
  /** The `type` label, e.g. `webhook`. */
  type: string;
  /** Every publisher's state (the management API's). */
  list(): PublisherState[];
  /** What waits in each publisher. Absent: no queue series. */
  queues?(): PublisherQueue[];
}

/** The labels of a per-queue series. */
type QueueLabel = 'publisher' | 'type';

const statuses: readonly PublisherStatus[] = ['On', 'Off', 'Error'];

/** A flag as a gauge value: 1 or 0; undefined stays undefined (no series). */
function oneIfTrue(flag: boolean | undefined): number | undefined {
  return flag === undefined ? undefined : flag ? 1 : 0;
}

/**
 * Upper bounds of the delivery-duration buckets, s: a loopback receiver answers in ms, a failing
 * webhook delivery takes up to 3 attempts of 10 s with waits of 1 s and 2 s (33 s).
 */
export const deliveryDurationBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40];

/** Registers the publisher series and hands out the delivery port of each publisher kind. */
export class PublisherMetricsCollector {
  private readonly sources: PublisherSource[] = [];
  private readonly duration: Histogram<'publisher' | 'type' | 'outcome'>;

  constructor(registry: Registry, now: () => number = Date.now) {
    const registers = [registry];
    const labelNames = ['publisher', 'type'] as const;
    const states = perScrape(() =>
      this.sources.flatMap((source) =>
        source.list().map((state) => ({ type: source.type, state })),
      ),
    );
    const queues = perScrape(() =>
      this.sources.flatMap((source) =>
        (source.queues?.() ?? []).map((queue) => ({ type: source.type, queue })),
      ),
    );
    new Gauge({
      name: 'tagd_publisher_status',
      help: 'Publisher status, 1 for the current one: On, Off, Error (its last delivery failed, or it could not start).',
      labelNames: [...labelNames, 'status'],
      registers,
      collect() {
        this.reset();
        for (const { type, state } of states()) {
          for (const status of statuses) {
            this.set({ publisher: state.name, type, status }, state.status === status ? 1 : 0);
          }
        }
      },
    });
    new Counter({
      name: 'tagd_publisher_deliveries_total',
      help: 'Deliveries by outcome: success (the receiver took the batch), failure (every attempt failed; the batch was dropped).',
      labelNames: [...labelNames, 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const { type, state } of states()) {
          const publisher = state.name;
          this.inc({ publisher, type, outcome: 'success' }, state.counters.batches);
          this.inc({ publisher, type, outcome: 'failure' }, state.counters.failures);
        }
      },
    });
    // One series a publisher, read from its state's counters.
    const counterSeries = (name: string, help: string, read: (state: PublisherState) => number) =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const { type, state } of states()) {
            this.inc({ publisher: state.name, type }, read(state));
          }
        },
      });
    counterSeries(
      'tagd_publisher_delivered_samples_total',
      'Samples in the batches delivered successfully.',
      (state) => state.counters.samples,
    );
    counterSeries(
      'tagd_publisher_dropped_samples_total',
      'Updates dropped before delivery because the buffer was full (Everything mode).',
      (state) => state.counters.droppedSamples,
    );
    // One series a publisher queue, a gauge or a counter; none for a queue where `read`
    // answers undefined.
    const queueSeries = (
      kind: 'gauge' | 'counter',
      name: string,
      help: string,
      read: (queue: PublisherQueue) => number | undefined,
    ) => {
      function collect(this: Gauge<QueueLabel> | Counter<QueueLabel>): void {
        this.reset();
        for (const { type, queue } of queues()) {
          const value = read(queue);
          if (value === undefined) continue;
          if (this instanceof Counter) this.inc({ publisher: queue.name, type }, value);
          else this.set({ publisher: queue.name, type }, value);
        }
      }
      const configuration = { name, help, labelNames, registers, collect };
      return kind === 'counter' ? new Counter(configuration) : new Gauge(configuration);
    };
    queueSeries(
      'gauge',
      'tagd_publisher_queue_depth',
      'What waits for delivery: MQTT messages (outbox and unacknowledged); webhook batches in the outbox plus Everything-mode updates.',
      (queue) => queue.depth,
    );
    new Gauge({
      name: 'tagd_publisher_oldest_queued_age_seconds',
      help: 'How long the oldest sample waiting for delivery has waited at most, s; 0 when none waits.',
      labelNames,
      registers,
      collect() {
        this.reset();
        const at = now();
        for (const { type, queue } of queues()) {
          const since = queue.oldestQueuedAt;
          this.set(
            { publisher: queue.name, type },
            since === undefined ? 0 : Math.max(0, (at - since) / 1000),
          );
        }
      },
    });
    // The durable outbox (MQTT json formats, webhook storeAndForward): only publishers with one.
    queueSeries(
      'gauge',
      'tagd_outbox_messages',
      'Messages (webhook: batches) stored in the durable outbox, waiting for the receiver or broker.',
      (queue) => queue.outbox?.messages,
    );
    queueSeries(
      'gauge',
      'tagd_outbox_bytes',
      'Bytes of topics and payloads in the outbox (bounded by bufferLimitMB).',
      (queue) => queue.outbox?.bytes,
    );
    queueSeries(
      'counter',
      'tagd_outbox_dropped_messages_total',
      'Messages dropped from a full outbox (the oldest first), since it was opened.',
      (queue) => queue.outbox?.dropped,
    );
    // Sparkplug store-and-forward (a primaryHostId): samples, not messages, are what the host gets.
    queueSeries(
      'gauge',
      'tagd_outbox_samples',
      'Sparkplug store-and-forward: samples stored in the outbox, waiting for the primary host.',
      (queue) => queue.outbox?.samples,
    );
    queueSeries(
      'counter',
      'tagd_outbox_dropped_samples_total',
      'Sparkplug store-and-forward: stored samples dropped from a full outbox (the oldest first), since it was opened.',
      (queue) => queue.outbox?.droppedSamples,
    );
    // Publishers with a primaryHostId only.
    queueSeries(
      'gauge',
      'tagd_sparkplug_primary_host_online',
      "1 while the Sparkplug primary host's latest STATE says online (publishers with a primaryHostId).",
      (queue) => oneIfTrue(queue.sparkplug?.primaryHostOnline),
    );
    queueSeries(
      'gauge',
      'tagd_sparkplug_catching_up',
      '1 while stored samples are forwarded to the primary host as historical data.',
      (queue) => oneIfTrue(queue.sparkplug?.catchingUp),
    );
    new Counter({
      name: 'tagd_sparkplug_commands_total',
      help: 'Sparkplug write command metrics (DCMD/NCMD), by outcome: written (through the tag writer) or refused.',
      labelNames: [...labelNames, 'outcome'],
      registers,
      collect() {
        this.reset();
        for (const { type, queue } of queues()) {
          const sparkplug = queue.sparkplug;
          if (sparkplug === undefined) continue;
          this.inc({ publisher: queue.name, type, outcome: 'written' }, sparkplug.commandsWritten);
          this.inc({ publisher: queue.name, type, outcome: 'refused' }, sparkplug.commandsRefused);
        }
      },
    });
    this.duration = new Histogram({
      name: 'tagd_publisher_delivery_duration_seconds',
      help: 'Duration of a delivery from its first attempt to its end (retries and their waits included), s.',
      labelNames: [...labelNames, 'outcome'],
      buckets: deliveryDurationBuckets,
      registers,
    });
  }

  /**
   * Adds a kind of publisher and returns the port its publishers report deliveries to.
   * @param source read at every scrape; may be filled after this call (the port is needed
   *   to construct it).
   */
  add(type: string, source: () => Omit<PublisherSource, 'type'> | undefined): PublisherMetrics {
    this.sources.push({
      type,
      list: () => source()?.list() ?? [],
      queues: () => source()?.queues?.() ?? [],
    });
    const duration = this.duration;
    return {
      deliveryEnded(publisher, outcome, seconds) {
        duration.observe({ publisher, type, outcome }, seconds);
      },
      removed(publisher) {
        for (const outcome of ['success', 'failure']) duration.remove({ publisher, type, outcome });
      },
    };
  }
}
