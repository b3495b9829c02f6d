import { randomInt } from 'node:crypto';
import type { TimerHandle } from '../../src/clock.js';
import type { Sample, SampleMetadata, TagValue } from '../../src/tags/sample.js';
import {
  type Driver,
  type DriverDeps,
  type DriverFactory,
  type DriverState,
  type DriverStatus,
  driverTagId,
  pollRefreshBoundMs,
  type WritableTag,
  type WriteRequest,
  type WriteResult,
  type WriteValue,
} from '../driver.js';
import { driverStoppedMessage, unavailableSample } from '../unavailable-sample.js';
import type { SimulatorDriverConfig, SimulatorTagConfig } from './schema.js';

interface SimulatedTag {
  fullTagId: string;
  config: SimulatorTagConfig;
  metadata: SampleMetadata | undefined;
  /** Running value of the stateful kinds (counter, randomWalk). */
  state: number;
  /** A value a client wrote, reported instead of the generated one until the driver restarts. */
  held: TagValue | undefined;
}

/**
 * Creates a simulator driver: every scan writes one batch with a new value for each tag.
 * Writable tags take written values: a counter or random walk goes on from the written value,
 * every other kind holds it (reported at each scan) until the driver restarts, so a demo write
 * stays visible.
 */
export const createSimulatorDriver: DriverFactory<SimulatorDriverConfig> = (config, deps) =>
  new SimulatorDriver(config, deps);

class SimulatorDriver implements Driver {
  readonly type = 'simulator';
  readonly name: string;
  private readonly tags: SimulatedTag[];
  private readonly random: () => number;
  private timer: TimerHandle | undefined;
  private startedAt = 0;
  private state: DriverState = 'Stopped';
  private since: number;

  constructor(
    private readonly config: SimulatorDriverConfig,
    private readonly deps: DriverDeps,
  ) {
    this.name = config.name;
    this.since = deps.clock.now();
    this.random = mulberry32(config.seed ?? randomInt(2 ** 31));
    this.tags = config.tags.map((tag) => ({
      fullTagId: driverTagId(config.name, tag.name),
      config: tag,
      metadata: metadataOf(tag),
      state: initialState(tag),
      held: undefined,
    }));
  }

  writableTags(): WritableTag[] {
    return this.tags
      .filter((tag) => tag.config.writable)
      .map((tag) => ({
        fullTagId: tag.fullTagId,
        allowWrites: this.config.allowWrites === true,
        ...(tag.config.writeMin !== undefined ? { writeMin: tag.config.writeMin } : {}),
        ...(tag.config.writeMax !== undefined ? { writeMax: tag.config.writeMax } : {}),
        check: (value) => checkValue(tag.config, value),
      }));
  }

  /** Takes each value at once and writes the tag's new sample, as a device read back would. */
  async write(requests: readonly WriteRequest[]): Promise<WriteResult[]> {
    const results: WriteResult[] = [];
    const batch: Sample[] = [];
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    for (const request of requests) {
      const tag = this.tags.find((candidate) => candidate.fullTagId === request.fullTagId);
      const problem = tag?.config.writable ? checkValue(tag.config, request.value) : 'not writable';
      if (tag === undefined || problem !== undefined) {
        results.push({ status: 'Bad', reason: 'NotSupported', message: `The value ${problem}.` });
        continue;
      }
      if (this.timer === undefined) {
        results.push({
          status: 'Bad',
          reason: 'Disconnected',
          message: 'The simulator is stopped; nothing was written.',
        });
        continue;
      }
      const kind = tag.config.kind;
      if (kind === 'counter' || kind === 'randomWalk') tag.state = request.value as number;
      else tag.held = request.value;
      const sample: Sample = {
        fullTagId: tag.fullTagId,
        utcTimestamp,
        quality: 'Good',
        value: request.value,
      };
      if (tag.metadata) sample.metadata = tag.metadata;
      batch.push(sample);
      results.push({ status: 'Good' });
    }
    if (batch.length > 0) this.deps.store.write(batch);
    return results;
  }

  async start(): Promise<void> {
    if (this.timer !== undefined) return;
    const { store, clock, logger } = this.deps;
    store.define(
      this.tags.map((tag) => ({
        fullTagId: tag.fullTagId,
        staleAfterMs: this.config.staleAfterMs,
        // Every scan rewrites every tag and nothing can answer late: three scans are the bound,
        // but at least a second, so a stalled event loop does not flash a fast scan Stale.
        refreshBoundMs: pollRefreshBoundMs(this.config.scanIntervalMs, 0),
        metadata: tag.metadata,
      })),
    );
    this.startedAt = clock.now();
    for (const tag of this.tags) {
      tag.state = initialState(tag.config);
      tag.held = undefined;
    }
    this.timer = clock.setInterval(() => this.scan(), this.config.scanIntervalMs);
    this.setState('Running');
    this.scan();
    logger.info(
      { tags: this.tags.length, scanIntervalMs: this.config.scanIntervalMs },
      'simulator started',
    );
  }

  async stop(): Promise<void> {
    if (this.timer === undefined) return;
    this.deps.clock.clearTimer(this.timer);
    this.timer = undefined;
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write(
      this.tags.map((tag) => unavailableSample(tag, utcTimestamp, driverStoppedMessage)),
    );
    this.setState('Stopped');
    this.deps.logger.info('simulator stopped');
  }

  status(): DriverStatus {
    return {
      state: this.state,
      since: new Date(this.since).toISOString(),
      tagCount: this.tags.length,
    };
  }

  private scan(): void {
    const began = performance.now();
    const now = this.deps.clock.now();
    const elapsedMs = now - this.startedAt;
    const utcTimestamp = new Date(now).toISOString();
    const batch: Sample[] = new Array(this.tags.length);
    for (let i = 0; i < this.tags.length; i++) {
      const tag = this.tags[i] as SimulatedTag;
      const sample: Sample = {
        fullTagId: tag.fullTagId,
        utcTimestamp,
        quality: 'Good',
        value: this.next(tag, elapsedMs),
      };
      if (tag.metadata) sample.metadata = tag.metadata;
      batch[i] = sample;
    }
    this.deps.store.write(batch);
    this.deps.metrics?.observePollSeconds((performance.now() - began) / 1000);
  }

  private next(tag: SimulatedTag, elapsedMs: number): TagValue {
    if (tag.held !== undefined) return tag.held;
    const c = tag.config;
    switch (c.kind) {
      case 'sine':
        return (
          c.offset + c.amplitude * Math.sin((2 * Math.PI * elapsedMs) / (c.periodSeconds * 1000))
        );
      case 'ramp':
        return c.min + (c.max - c.min) * phase(elapsedMs, c.periodSeconds);
      case 'square':
        return phase(elapsedMs, c.periodSeconds) < 0.5 ? c.high : c.low;
      case 'boolean':
        return phase(elapsedMs, c.periodSeconds) >= 0.5;
      case 'string': {
        const index = Math.floor(elapsedMs / (c.periodSeconds * 1000)) % c.values.length;
        return c.values[index] as string;
      }
      case 'counter': {
        const value = tag.state;
        const following = value + c.step;
        tag.state = c.max !== undefined && following > c.max ? c.start : following;
        return value;
      }
      case 'randomWalk': {
        const value = tag.state;
        const moved = value + (this.random() * 2 - 1) * c.step;
        tag.state = Math.min(c.max, Math.max(c.min, moved));
        return value;
      }
    }
  }

  private setState(state: DriverState): void {
    this.state = state;
    this.since = this.deps.clock.now();
  }
}

/** Why a simulated tag cannot take `value`, or undefined: the JSON type of its kind. */
function checkValue(tag: SimulatorTagConfig, value: WriteValue): string | undefined {
  switch (tag.kind) {
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      return typeof value === 'string' && value.length <= 256
        ? undefined
        : 'must be a string of at most 256 characters';
    case 'counter':
      return typeof value === 'number' && Number.isSafeInteger(value)
        ? undefined
        : 'must be a whole number';
    default:
      return typeof value === 'number' ? undefined : 'must be a number';
  }
}

/** Position within the current period, 0 ≤ phase < 1. */
function phase(elapsedMs: number, periodSeconds: number): number {
  const periodMs = periodSeconds * 1000;
  return (elapsedMs % periodMs) / periodMs;
}

function initialState(tag: SimulatorTagConfig): number {
  return tag.kind === 'counter' || tag.kind === 'randomWalk' ? tag.start : 0;
}

function metadataOf(tag: SimulatorTagConfig): SampleMetadata | undefined {
  if (tag.unit === undefined && tag.description === undefined) return undefined;
  return {
    ...(tag.unit !== undefined ? { unit: tag.unit } : {}),
    ...(tag.description !== undefined ? { description: tag.description } : {}),
  };
}

/** Small seedable PRNG (mulberry32): repeatable random walks for a given seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
