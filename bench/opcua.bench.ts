/**
 * OPC UA client-side cost: 10,000 monitored items updated every second by a node-opcua server
 * in a child process (its CPU is not counted), security None. What is measured is the CPU time
 * of this process (user + system, process.cpuUsage) per notification while values stream in,
 * after the subscriptions are set up and the initial values are in.
 *
 * - baseline: a bare node-opcua client (ClientSubscription + ClientMonitoredItemGroup, same
 *   subscriptions and batches as the driver plans) whose `changed` listener only reads the value.
 * - subject: the tagd OPC UA driver writing every notification into a TagStore.
 *
 * Rates are notifications per CPU second (printed `notifications per CPU/s`; higher is cheaper); the figure to quote is the CPU
 * per 100,000 notifications, printed for each sample. The sides take turns, one connected at a
 * time. Asynchronous, so it is a `measured` case (bench/run.ts) rather than a timed loop.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import type { CaseResult, MeasuredCase, SideResult } from './harness.js';

/** Monitored items (server variables), as the issue asks. */
const itemCount = 10_000;
/** Server update period and the items' sampling and publishing interval, ms. */
const periodMs = 1000;
/** Notifications counted per timed sample. */
const window = 100_000;
/** Timed samples per side. */
const samples = 3;

/** A side: connects and subscribes, counts notifications, disconnects. */
interface OpcuaSide {
  name: string;
  /** Connects and subscribes every item; resolves once subscribed. */
  start(endpointUrl: string, pkiDir: string): Promise<void>;
  /** Notifications received so far. */
  count(): number;
  stop(): Promise<void>;
}

async function until(ready: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const nodeIds = Array.from({ length: itemCount }, (_, i) => `ns=1;s=Bulk${i}`);

function baselineSide(): OpcuaSide {
  let received = 0;
  let sink = 0;
  let client: import('node-opcua').OPCUAClient | undefined;
  let certificates: import('node-opcua').OPCUACertificateManager | undefined;
  return {
    name: 'bare node-opcua ClientSubscription + ClientMonitoredItemGroup',
    async start(endpointUrl, pkiDir) {
      await import('../drivers/opcua/node-opcua-quiet.js');
      await import('../drivers/opcua/node-opcua-logging.js');
      const ua = await import('node-opcua');
      const { planSubscriptions } = await import('../drivers/opcua/subscription-plan.js');
      certificates = new ua.OPCUACertificateManager({
        rootFolder: pkiDir,
        automaticallyAcceptUnknownCertificate: false,
        disableFileWatchers: true,
      });
      client = ua.OPCUAClient.create({
        endpointMustExist: false,
        clientCertificateManager: certificates,
        connectionStrategy: { maxRetry: 3, initialDelay: 100, maxDelay: 1000 },
      });
      await client.connect(endpointUrl);
      const session = await client.createSession();
      const plans = planSubscriptions(
        nodeIds.map(() => ({
          publishingIntervalMs: periodMs,
          samplingIntervalMs: periodMs,
          deadband: undefined,
        })),
      );
      for (const plan of plans) {
        const subscription = await session.createSubscription2({
          requestedPublishingInterval: plan.publishingIntervalMs,
          requestedMaxKeepAliveCount: 10,
          requestedLifetimeCount: 60,
          maxNotificationsPerPublish: 0,
          publishingEnabled: true,
          priority: 10,
        });
        for (const batch of plan.batches) {
          const group = ua.ClientMonitoredItemGroup.create(
            subscription,
            batch.tags.map((index) => ({
              nodeId: nodeIds[index] as string,
              attributeId: ua.AttributeIds.Value,
            })),
            { samplingInterval: batch.samplingIntervalMs, queueSize: 1, discardOldest: true },
            ua.TimestampsToReturn.Both,
          );
          group.on('changed', (_item, dataValue: import('node-opcua').DataValue) => {
            received++;
            sink += dataValue.value.value as number;
          });
          await new Promise<void>((resolve) => group.once('initialized', () => resolve()));
        }
      }
    },
    count: () => received + (sink > Number.MAX_VALUE ? 1 : 0),
    async stop() {
      await client?.disconnect();
      await certificates?.dispose();
      client = undefined;
    },
  };
}

function driverSide(): OpcuaSide {
  let driver: import('../drivers/driver.js').Driver | undefined;
  return {
    name: 'tagd OPC UA driver + TagStore.write',
    async start(endpointUrl, pkiDir) {
      const { createOpcuaDriver } = await import('../drivers/opcua/index.js');
      const { opcuaDriverSchema } = await import('../drivers/opcua/schema.js');
      const { TagStore } = await import('../src/tags/tag-store.js');
      const { systemClock } = await import('../src/clock.js');
      const config = opcuaDriverSchema.parse({
        type: 'opcua',
        name: 'Bench',
        endpointUrl,
        publishingIntervalMs: periodMs,
        samplingIntervalMs: periodMs,
        tags: nodeIds.map((nodeId, i) => ({ name: `Item${i}`, nodeId })),
      });
      // The driver keeps its PKI in <state>/opcua/pki: point the state there.
      const stateDir = join(pkiDir, '..', '..');
      driver = createOpcuaDriver(config, {
        store: new TagStore({ clock: systemClock }),
        clock: systemClock,
        logger: pino({ level: 'silent' }),
        stateDir,
      });
      await driver.start();
      const started = driver;
      await until(() => started.status().state === 'Running', 'the driver subscribed');
    },
    count: () => driver?.status().counters?.notifications ?? 0,
    async stop() {
      await driver?.stop();
      driver = undefined;
    },
  };
}

/** Starts the server child; resolves with its endpoint URL. */
async function startServer(pkiDir: string): Promise<{ child: ChildProcess; endpointUrl: string }> {
  const script = fileURLToPath(new URL('../test/helpers/opcua-bench-server.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', script, pkiDir, String(itemCount), String(periodMs)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const endpointUrl = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk) => {
      text += chunk;
      const line = text.split('\n').find((candidate) => candidate.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { endpointUrl: string }).endpointUrl);
    });
    child.once('exit', (code) => reject(new Error(`the OPC UA bench server exited (${code})`)));
  });
  return { child, endpointUrl };
}

/** One timed sample: CPU seconds spent while `window` notifications arrived. */
async function sample(
  side: OpcuaSide,
  endpointUrl: string,
  pkiDir: string,
  log: (line: string) => void,
): Promise<number> {
  await side.start(endpointUrl, pkiDir);
  try {
    // Initial values, then one full update round, before timing.
    await until(() => side.count() >= 2 * itemCount, `${side.name}: the first two rounds`);
    const startCount = side.count();
    const startCpu = process.cpuUsage();
    await until(() => side.count() - startCount >= window, `${side.name}: ${window} notifications`);
    const cpu = process.cpuUsage(startCpu);
    const notifications = side.count() - startCount;
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    log(
      `  ${side.name}: ${((cpuSeconds * 1000 * 100_000) / notifications).toFixed(0)} ms CPU per 100,000 notifications (${notifications} notifications)`,
    );
    return notifications / cpuSeconds;
  } finally {
    await side.stop();
  }
}

function sideResult(name: string, rates: number[]): SideResult {
  const sorted = [...rates].sort((a, b) => a - b);
  const medianRate = sorted[sorted.length >> 1] as number;
  const minRate = sorted[0] as number;
  const maxRate = sorted[sorted.length - 1] as number;
  return {
    name,
    iterationsPerSample: window,
    rates,
    medianRate,
    minRate,
    maxRate,
    spread: (maxRate - minRate) / medianRate,
  };
}

const info = {
  name: `OPC UA: ${itemCount.toLocaleString('en')} monitored items at 1 s, client CPU`,
  unit: 'notifications per CPU',
  budget: {
    minRatio: 0.5,
    description:
      'the driver and the store at most double the CPU a bare node-opcua client spends on ' +
      'the same notifications',
  },
};

/** Runs the case: server up, sides alternated, server down. */
async function measure(): Promise<CaseResult> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const folder = mkdtempSync(join(tmpdir(), 'tagd-opcua-bench-'));
  const { child, endpointUrl } = await startServer(join(folder, 'server-pki'));
  const pkiDir = join(folder, 'state', 'opcua', 'pki');
  try {
    const sides = [baselineSide(), driverSide()] as const;
    const rates: [number[], number[]] = [[], []];
    for (let round = 0; round < samples; round++) {
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      for (const index of order) {
        rates[index]?.push(await sample(sides[index] as OpcuaSide, endpointUrl, pkiDir, log));
      }
    }
    const baseline = sideResult(sides[0].name, rates[0]);
    const subject = sideResult(sides[1].name, rates[1]);
    const ratio = subject.medianRate / baseline.medianRate;
    const perHundredThousand = (rate: number) => `${((100_000 / rate) * 1000).toFixed(0)} ms`;
    log(
      `  median CPU per 100,000 notifications: baseline ${perHundredThousand(baseline.medianRate)}, ` +
        `tagd driver ${perHundredThousand(subject.medianRate)}`,
    );
    return {
      benchmark: info,
      baseline,
      subject,
      ratio,
      verdict: ratio >= info.budget.minRatio ? 'met' : 'NOT met',
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The case, for bench/run.ts (a `measured` case: it runs itself). */
export const cases: MeasuredCase[] = [{ kind: 'measured', ...info, measure }];
