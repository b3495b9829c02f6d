/**
 * What every kind of publisher gets from PublisherSet when a start throws. The real kinds catch
 * what they know can fail (their files, their outbox) and go Error with a reason; this checks
 * the net under them with a publisher whose start throws what nobody foresaw, since the real
 * ones cannot be made to throw on purpose.
 */
import test from 'ava';
import type { FieldError } from '../../src/errors.js';
import type { LicenseState } from '../../src/license/license.js';
import type { PublisherQueue, PublisherState } from '../../src/publishers/publisher.js';
import {
  type ManagedPublisher,
  PublisherSet,
  type PublisherSetConfig,
  startFailedReason,
} from '../../src/publishers/publisher-set.js';
import { Collections } from '../../src/tags/collections.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

const license: LicenseState = { edition: 'server', features: new Set(['dataRelay']) };

interface Config extends PublisherSetConfig {
  /** The start throws this message. */
  throws?: string;
}

/** A publisher that runs until stopped, or whose start throws after taking a timer. */
class Probe implements ManagedPublisher<Config, PublisherState> {
  status: PublisherState['status'] = 'Off';
  reason: string | undefined;
  timer: NodeJS.Timeout | undefined;
  stops = 0;

  constructor(public config: Config) {}

  get name() {
    return this.config.name;
  }
  get running() {
    return this.timer !== undefined;
  }
  get outboxFile() {
    return undefined;
  }
  async start() {
    this.timer = setInterval(() => undefined, 60_000);
    if (this.config.throws !== undefined) throw new Error(this.config.throws);
    this.status = 'On';
    this.reason = undefined;
  }
  async stop(reason = 'stopped') {
    this.stops++;
    clearInterval(this.timer);
    this.timer = undefined;
    this.setOff(reason);
  }
  setOff(reason: string) {
    this.status = 'Off';
    this.reason = reason;
  }
  setError(reason: string) {
    this.status = 'Error';
    this.reason = reason;
  }
  async reconfigure(config: Config) {
    const wasRunning = this.running;
    if (wasRunning) await this.stop();
    this.config = config;
    if (wasRunning) await this.start();
  }
  state(): PublisherState {
    const counters = { batches: 0, samples: 0, failures: 0, skippedTicks: 0, droppedSamples: 0 };
    return {
      name: this.name,
      status: this.status,
      ...(this.reason ? { reason: this.reason } : {}),
      counters,
    };
  }
  queue(): PublisherQueue {
    return { name: this.name, depth: 0 };
  }
}

class Probes extends PublisherSet<Config, PublisherState, Probe> {
  readonly built: Probe[] = [];
  protected build(config: Config): Probe {
    const probe = new Probe(config);
    this.built.push(probe);
    return probe;
  }
  async checkFiles(): Promise<FieldError[]> {
    return [];
  }
}

async function setup() {
  const store = new TagStore({ clock: new ManualClock() });
  const collections = new Collections(store, [{ name: 'line1', members: ['Line1/**'] }]);
  await collections.start();
  const logs = captureLogs();
  const probes = new Probes(
    { collections, logger: logs.logger, license: () => license },
    { component: 'probe', label: 'Probe', noun: 'probe' },
  );
  return { probes, logs };
}

const config = (name: string, extra: Partial<Config> = {}): Config => ({
  name,
  autoConnect: true,
  collections: ['line1'],
  ...extra,
});

test('a start that throws leaves that publisher Error, not running, with a reason; the others and the caller go on', async (t) => {
  const { probes, logs } = await setup();
  t.teardown(() => probes.stopAll());
  // At load: startAll does not reject, and the publisher after the broken one starts.
  await probes.startAll([config('broken', { throws: 'secret detail' }), config('fine')]);
  t.deepEqual(
    probes.list().map(({ name, status, reason }) => ({ name, status, reason })),
    [
      { name: 'broken', status: 'Error', reason: startFailedReason },
      { name: 'fine', status: 'On', reason: undefined },
    ],
  );
  const broken = probes.built[0] as Probe;
  t.false(broken.running, 'what the failed start took is released');
  const line = logs.lines.find((entry) => entry.level === 50);
  t.is(line?.msg, "Probe publisher 'broken' failed to start; the other publishers keep running.");
  t.regex(JSON.stringify(line?.err), /secret detail/, 'the log has the error');
  t.false(JSON.stringify(probes.list()).includes('secret detail'), 'the state does not');

  // Over the API: Start and a replacement answer with the state instead of failing.
  t.like(await probes.start('broken'), { status: 'Error', reason: startFailedReason });
  t.false(broken.running);
  await probes.put(config('fine', { throws: 'on restart' }));
  t.like(probes.get('fine'), { status: 'Error', reason: startFailedReason });
  t.false((probes.built[1] as Probe).running);
  // The publisher wanted to run: a replacement that can start, starts (no Start needed).
  await probes.put(config('fine'));
  t.like(probes.get('fine'), { status: 'On', reason: undefined });
  // A Start recovers once what failed is fixed (a file replaced on disk), and Stop makes it Off.
  broken.config = config('broken');
  t.like(await probes.start('broken'), { status: 'On', reason: undefined });
  t.true(broken.running);
  await probes.stop('broken');
  t.like(probes.get('broken'), { status: 'Off', reason: 'stopped' });
  await probes.put(config('broken', { throws: 'again' }));
  t.like(probes.get('broken'), { status: 'Off', reason: 'stopped' }, 'a stopped one stays Off');
});
