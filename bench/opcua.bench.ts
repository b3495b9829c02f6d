/**
 * OPC UA client-side cost: 10,000 monitored items updated every second by a node-opcua server
 * in a child process (its CPU is not counted), security None. What is measured is the CPU time
 * of this process (user + system, process.cpuUsage) per notification while values stream in,
 * after the subscriptions are set up and the initial values are in (bench/cpu-cost.ts).
 *
 * - baseline: a bare node-opcua client (ClientSubscription + ClientMonitoredItemGroup, same
 *   subscriptions and batches as the driver plans) whose `changed` listener only reads the value.
 * - subject: the tagd OPC UA driver writing every notification into a TagStore.
 *
 * Rates are notifications per CPU second (printed `notifications per CPU/s`; higher is cheaper); the figure to quote is the CPU
 * per 100,000 notifications, printed for each sample. The sides take turns, one connected at a
 * time. Asynchronous, so it is a `measured` case (bench/run.ts) rather than a timed loop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CpuCostSide, cpuCostCase, driverDeps, startPeerProcess, until } from './cpu-cost.js';
import type { MeasuredCase } from './harness.js';

/** Monitored items (server variables), as the issue asks. */
const itemCount = 10_000;
/** Server update period and the items' sampling and publishing interval, ms. */
const periodMs = 1000;
/** Notifications counted per timed sample. */
const window = 100_000;
/** Timed samples per side. */
const samples = 3;

/** Longest wait for the subscriptions, the first rounds or one sample, ms. */
const timeoutMs = 120_000;

/** Where a side connects: the server's endpoint, and the PKI folder of the client. */
interface OpcuaPeer {
  endpointUrl: string;
  pkiDir: string;
}

/** A side: connects and subscribes every item (resolves once subscribed), counts notifications. */
type OpcuaSide = CpuCostSide<OpcuaPeer>;

const nodeIds = Array.from({ length: itemCount }, (_, i) => `ns=1;s=Bulk${i}`);

function baselineSide(): OpcuaSide {
  let received = 0;
  let sink = 0;
  let client: import('node-opcua').OPCUAClient | undefined;
  let certificates: import('node-opcua').OPCUACertificateManager | undefined;
  return {
    name: 'bare node-opcua ClientSubscription + ClientMonitoredItemGroup',
    async start({ endpointUrl, pkiDir }) {
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
      // Each sample starts from zero, as the driver side does: its warm-up wait must count.
      received = 0;
    },
  };
}

function driverSide(): OpcuaSide {
  let driver: import('../drivers/driver.js').Driver | undefined;
  return {
    name: 'tagd OPC UA driver + TagStore.write',
    async start({ endpointUrl, pkiDir }) {
      const { createOpcuaDriver } = await import('../drivers/opcua/index.js');
      const { opcuaDriverSchema } = await import('../drivers/opcua/schema.js');
      const config = opcuaDriverSchema.parse({
        type: 'opcua',
        name: 'Bench',
        endpointUrl,
        publishingIntervalMs: periodMs,
        samplingIntervalMs: periodMs,
        tags: nodeIds.map((nodeId, i) => ({ name: `Item${i}`, nodeId })),
      });
      // The driver keeps its PKI in <state>/opcua/pki: point the state there.
      driver = createOpcuaDriver(config, await driverDeps(join(pkiDir, '..', '..')));
      await driver.start();
      const started = driver;
      await until(() => started.status().state === 'Running', 'the driver subscribed', timeoutMs);
    },
    count: () => driver?.status().counters?.notifications ?? 0,
    async stop() {
      await driver?.stop();
      driver = undefined;
    },
  };
}

const perHundredThousand = (rate: number) => `${((100_000 / rate) * 1000).toFixed(0)} ms`;

/** The case, for bench/run.ts (a `measured` case: it runs itself). */
export const cases: MeasuredCase[] = [
  cpuCostCase<OpcuaPeer, OpcuaSide>({
    name: `OPC UA: ${itemCount.toLocaleString('en')} monitored items at 1 s, client CPU`,
    unit: 'notifications per CPU',
    budget: {
      minRatio: 0.5,
      description:
        'the driver and the store at most double the CPU a bare node-opcua client spends on ' +
        'the same notifications',
    },
    async startPeer() {
      const folder = mkdtempSync(join(tmpdir(), 'tagd-opcua-bench-'));
      const remove = () => rmSync(folder, { recursive: true, force: true });
      try {
        const server = await startPeerProcess<{ endpointUrl: string }>(
          new URL('../test/helpers/opcua-bench-server.ts', import.meta.url),
          [join(folder, 'server-pki'), String(itemCount), String(periodMs)],
          'the OPC UA bench server',
        );
        return {
          peer: {
            endpointUrl: server.announcement.endpointUrl,
            pkiDir: join(folder, 'state', 'opcua', 'pki'),
          },
          async close() {
            await server.stop('SIGTERM');
            remove();
          },
        };
      } catch (error) {
        remove();
        throw error;
      }
    },
    baseline: baselineSide(),
    subject: driverSide(),
    counted: 'notifications',
    // Initial values, then one full update round, before timing.
    settle: { units: 2 * itemCount, what: 'the first two rounds' },
    window,
    samples,
    timeoutMs,
    describeSample: (side, { units, cpuSeconds }) =>
      `${side.name}: ${perHundredThousand(units / cpuSeconds)} CPU per 100,000 notifications (${units} notifications)`,
    describeMedians: (baseline, subject) =>
      `median CPU per 100,000 notifications: baseline ${perHundredThousand(baseline.medianRate)}, ` +
      `tagd driver ${perHundredThousand(subject.medianRate)}`,
  }),
];
