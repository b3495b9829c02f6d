/**
 * Change → arrival latencies on the real clock, for the latency cases of bench/mqtt.bench.ts and
 * bench/relay.bench.ts: every `everyMs` a change of each tag is written, each carrying a serial
 * number as its value; whoever receives a change at the far end hands its value to
 * {@link ChangeLatencies.arrived}, which notes how long it took since its write.
 */
import { performance } from 'node:perf_hooks';
import type { Sample } from '../src/tags/sample.js';

/** The writer's pace. */
export interface ChangePace {
  /** The tags changed at every write, in this order. */
  tagIds: readonly string[];
  /** Interval of the writes, ms. */
  everyMs: number;
  /** How long the writes go on, ms. */
  durationMs: number;
  /** Wait after the last write for its changes to arrive, ms. */
  settleMs: number;
}

/** Serial-numbered changes written on a timer, and the latency of each to its arrival. */
export class ChangeLatencies {
  readonly #pace: ChangePace;
  /** When each serial number was written, `performance.now()` ms. */
  readonly #writtenAt = new Map<number, number>();
  #latencies: number[] = [];

  constructor(pace: ChangePace) {
    this.#pace = pace;
  }

  /**
   * Notes the arrival at `at` (`performance.now()` ms; default now) of the change whose value is
   * `value`; values that are not a serial number of the current run are ignored.
   */
  arrived(value: unknown, at = performance.now()): void {
    const writtenAt = this.#writtenAt.get(value as number);
    if (writtenAt !== undefined) this.#latencies.push(at - writtenAt);
  }

  /**
   * Hands `write` a change of every tag every `everyMs` (serials from 1) until `durationMs` has
   * passed, waits `settleMs`, and resolves with this run's latencies, ms, in arrival order.
   */
  async drive(write: (samples: Sample[]) => void): Promise<number[]> {
    const { tagIds, everyMs, durationMs, settleMs } = this.#pace;
    const latencies: number[] = [];
    this.#latencies = latencies;
    let serial = 0;
    const began = performance.now();
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const stamp = new Date().toISOString();
        const at = performance.now();
        const samples = tagIds.map((fullTagId) => {
          serial++;
          this.#writtenAt.set(serial, at);
          return { fullTagId, utcTimestamp: stamp, quality: 'Good' as const, value: serial };
        });
        write(samples);
        if (at - began >= durationMs) {
          clearInterval(timer);
          resolve();
        }
      }, everyMs);
    });
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    this.#writtenAt.clear();
    return latencies;
  }
}
