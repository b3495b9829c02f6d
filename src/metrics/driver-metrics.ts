/**
 * Per-driver series. Counts, states and tag qualities are read from the drivers' own status
 * (through the Drivers API's reports) when Prometheus scrapes, so polling pays nothing for them
 * and a driver no longer listed simply has no series at the next scrape. Poll durations are the
 * one thing a driver pushes, through the {@link DriverMetrics} port it gets in its deps.
 *
 * Labels: `driver` (the component name, the first segment of its tags) and `type`; bounded by
 * the profile's drivers, never a tag path.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DriverMetrics } from '../../drivers/driver.js';
import type { DriverApiState, DriverReport } from '../runtime/driver-reports.js';
import type { Quality } from '../tags/sample.js';
import { perScrape } from './per-scrape.js';

/** Where the driver series are read from at each scrape: the Drivers routes' reports. */
export interface DriverReportSource {
  list(): DriverReport[];
}

/** A driver's poll-duration port and the way to drop its series when the driver goes away. */
export interface DriverMetricsHandle {
  /** Given to the driver in its deps. */
  readonly port: DriverMetrics;
  /** Removes the driver's pushed series (poll durations); call once the driver is removed. */
  remove(): void;
}

const states: readonly DriverApiState[] = ['Running', 'Reconnecting', 'Stopped', 'Failed'];
const qualities: readonly Quality[] = ['Good', 'Stale', 'Unavailable', 'Bad'];

/**
 * The driver counters behind each tagd series, summed. Drivers name their status counters
 * themselves (docs/drivers-modbus.md, drivers-opcua.md, drivers-can.md: status counters); a driver having none of a series'
 * counters gets no such series rather than a misleading 0.
 */
const counterSources = {
  requests: ['requests'],
  timeouts: ['timeouts'],
  reconnects: ['disconnects'],
  malformed: ['malformed', 'malformedFrames'],
  connectFailures: ['connectsFailed', 'failedAttempts'],
  relayMessages: ['messages'],
  sequenceErrors: ['sequenceErrors'],
  rebirths: ['rebirthsRequested'],
  historical: ['historicalSamples'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Upper bounds of the poll-duration buckets, s: a loopback Modbus poll takes a few ms, a slow
 * RTU line or a device answering at its timeout (1 s default, several requests) seconds.
 */
export const pollDurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Registers the driver series. */
export class DriverMetricsCollector {
  private readonly pollDuration: Histogram<'driver' | 'type'>;

  /**
   * @param source the running drivers' reports, read at every scrape.
   */
  constructor(registry: Registry, source: DriverReportSource) {
    const registers = [registry];
    const labelNames = ['driver', 'type'] as const;
    // One reading per scrape for every series below: the reports count qualities over the store.
    const reports = perScrape(() => source.list());
    new Gauge({
      name: 'tagd_driver_state',
      help: 'Driver state, 1 for the current one: Running, Reconnecting (also while starting), Stopped, Failed.',
      labelNames: [...labelNames, 'state'],
      registers,
      collect() {
        this.reset();
        for (const report of reports()) {
          for (const state of states) {
            this.set(
              { driver: report.name, type: report.type, state },
              report.state === state ? 1 : 0,
            );
          }
        }
      },
    });
    new Gauge({
      name: 'tagd_driver_tags',
      help: 'Tags of the driver in the store, by quality (Good, Stale, Unavailable, Bad).',
      labelNames: [...labelNames, 'quality'],
      registers,
      collect() {
        this.reset();
        for (const report of reports()) {
          for (const quality of qualities) {
            this.set(
              { driver: report.name, type: report.type, quality },
              report.tagsByQuality[quality],
            );
          }
        }
      },
    });
    const counter = (
      name: string,
      help: string,
      sources: readonly string[],
    ): Counter<'driver' | 'type'> =>
      new Counter({
        name,
        help,
        labelNames,
        registers,
        collect() {
          this.reset();
          for (const report of reports()) {
            let total: number | undefined;
            for (const key of sources) {
              const value = report.counters[key];
              if (value !== undefined) total = (total ?? 0) + value;
            }
            if (total !== undefined) this.inc({ driver: report.name, type: report.type }, total);
          }
        },
      });
    counter(
      'tagd_driver_requests_total',
      'Read requests sent to the device (Modbus).',
      counterSources.requests,
    );
    counter(
      'tagd_driver_timeouts_total',
      'Requests the device did not answer within timeoutMs (Modbus).',
      counterSources.timeouts,
    );
    counter(
      'tagd_driver_reconnects_total',
      'Connections lost or given up, each followed by reconnecting (Modbus, OPC UA, CAN, Sparkplug host, MQTT).',
      counterSources.reconnects,
    );
    counter(
      'tagd_driver_malformed_frames_total',
      'Answers, frames, log lines or payloads that could not be decoded: a wrong CRC or MBAP header, an answer not fitting its request (Modbus), an unparsable transport line (CAN), a payload that is not Sparkplug (Sparkplug host) or cannot be read (MQTT).',
      counterSources.malformed,
    );
    counter(
      'tagd_driver_connect_failures_total',
      'Connection attempts that failed (Modbus, OPC UA, Sparkplug host, MQTT).',
      counterSources.connectFailures,
    );
    counter(
      'tagd_driver_relay_messages_total',
      'Sparkplug messages received (births, data, deaths) by a Sparkplug host driver.',
      counterSources.relayMessages,
    );
    counter(
      'tagd_driver_sequence_errors_total',
      'Sparkplug messages whose seq was not the one expected (Sparkplug host).',
      counterSources.sequenceErrors,
    );
    counter(
      'tagd_driver_rebirths_requested_total',
      'Rebirth requests (NCMD Node Control/Rebirth) sent to edge nodes (Sparkplug host).',
      counterSources.rebirths,
    );
    counter(
      'tagd_driver_historical_samples_total',
      'Metrics flagged is_historical received and handed to history (Sparkplug host).',
      counterSources.historical,
    );
    this.pollDuration = new Histogram({
      name: 'tagd_driver_poll_duration_seconds',
      help: 'Duration of one poll (Modbus: one poll group, every request answered or timed out) or scan cycle (simulator), s.',
      labelNames,
      buckets: pollDurationBuckets,
      registers,
    });
  }

  /** The port of one driver, its labels bound once so a poll costs one observe. */
  driver(name: string, type: string): DriverMetricsHandle {
    const labels = { driver: name, type };
    const bound = this.pollDuration.labels(labels);
    return {
      port: { observePollSeconds: (seconds) => bound.observe(seconds) },
      remove: () => this.pollDuration.remove(labels),
    };
  }
}
