/**
 * Modbus polling cost: 10,000 contiguous holding registers polled every 100 ms (100,000
 * registers per second) from a minimal Modbus TCP server in a child process on loopback (its
 * CPU is not counted; test/helpers/modbus-bench-server.ts). What is measured is the CPU time of
 * this process (user + system, process.cpuUsage) per register read while polls run
 * (bench/cpu-cost.ts).
 *
 * - baseline: a plain modbus-serial client loop reading the same registers with the same
 *   schedule, 125 per request, one request at a time, only summing the values.
 * - subject: the tagd Modbus driver (10,000 uint16 tags, block planner, decode, one
 *   TagStore.write per poll).
 *
 * Rates are registers per CPU second (higher is cheaper). The budget (docs/architecture.md, "Budgets") is
 * 100,000 registers/s at under 15 % of one core, i.e. at least 666,667 registers per CPU
 * second; the CPU per 100,000 registers and the share of a core are printed for each sample,
 * with the driver's requests per poll against the minimum ⌈10,000 / 125⌉ = 80.
 */
import { type CpuCostSide, cpuCostCase, driverDeps, startPeerProcess, until } from './cpu-cost.js';
import type { MeasuredCase } from './harness.js';

/** Registers polled (one uint16 tag each), from address 0. */
const registerCount = 10_000;
/** Poll interval, ms: 10,000 registers every 100 ms = 100,000 registers per second. */
const intervalMs = 100;
/** Registers counted per timed sample (5 s of polling). */
const window = 500_000;
/** Timed samples per side. */
const samples = 3;
/** The budget: 100,000 registers per second at 15 % of one core. */
const minRegistersPerCpuSecond = 100_000 / 0.15;
const minimumRequests = Math.ceil(registerCount / 125);

/** Longest wait for the first polls or for one sample, ms. */
const timeoutMs = 60_000;

/** A client polling the server at its port; counts registers read. */
interface ModbusSide extends CpuCostSide<number> {
  /** Requests per poll, when the side knows it. */
  requestsPerPoll(): number | undefined;
}

function baselineSide(): ModbusSide {
  let read = 0;
  let sink = 0;
  let timer: NodeJS.Timeout | undefined;
  let client: import('modbus-serial/ModbusRTU.js').ModbusRTU | undefined;
  let busy = false;
  return {
    name: 'plain modbus-serial client loop',
    async start(port) {
      // modbus-serial is CommonJS: its module.exports is also its `default`.
      const ModbusRTU = (await import('modbus-serial')).default.default;
      const connected = new ModbusRTU();
      await connected.connectTCP('127.0.0.1', { port });
      connected.setID(1);
      connected.setTimeout(1000);
      client = connected;
      const poll = async () => {
        if (busy) return;
        busy = true;
        try {
          for (let start = 0; start < registerCount; start += 125) {
            const answer = await connected.readHoldingRegisters(
              start,
              Math.min(125, registerCount - start),
            );
            for (const value of answer.data) sink += value;
            read += answer.data.length;
          }
        } finally {
          busy = false;
        }
      };
      timer = setInterval(() => void poll(), intervalMs);
      void poll();
    },
    count: () => read + (sink > Number.MAX_VALUE ? 1 : 0),
    requestsPerPoll: () => undefined,
    async stop() {
      clearInterval(timer);
      await until(() => !busy, 'the last poll ended', timeoutMs);
      await new Promise<void>((resolve) => client?.close(() => resolve()) ?? resolve());
      client = undefined;
      // Each sample starts from zero, as the driver side does: its warm-up wait must count.
      read = 0;
    },
  };
}

function driverSide(): ModbusSide {
  let driver: import('../drivers/modbus/modbus-driver.js').ModbusDriver | undefined;
  let read = 0;
  return {
    name: 'tagd Modbus driver + TagStore.write',
    async start(port) {
      const { ModbusDriver } = await import('../drivers/modbus/modbus-driver.js');
      const { modbusDriverSchema } = await import('../drivers/modbus/schema.js');
      const config = modbusDriverSchema.parse({
        type: 'modbus',
        name: 'Bench',
        transport: { kind: 'tcp', host: '127.0.0.1', port },
        pollIntervalMs: intervalMs,
        tags: Array.from({ length: registerCount }, (_, i) => ({
          name: `R${i}`,
          table: 'holdingRegister',
          address: i,
        })),
      });
      const deps = await driverDeps('/nonexistent');
      deps.store.subscribe((updates) => {
        for (let i = 0; i < updates.length; i++) if (updates[i]?.sample.quality === 'Good') read++;
      });
      driver = new ModbusDriver(config, deps);
      await driver.start();
    },
    count: () => read,
    requestsPerPoll() {
      const counters = driver?.status().counters;
      const polls = (counters?.polls ?? 0) - (counters?.pollsSkipped ?? 0);
      return polls > 0 ? (counters?.requests ?? 0) / (counters?.polls ?? 1) : undefined;
    },
    async stop() {
      await driver?.stop();
      driver = undefined;
      read = 0;
    },
  };
}

const perHundredThousand = (rate: number) => `${((100_000 / rate) * 1000).toFixed(1)} ms`;

/** The case, for bench/run.ts (a `measured` case: it runs itself). */
export const cases: MeasuredCase[] = [
  cpuCostCase<number, ModbusSide>({
    name: `Modbus: ${registerCount.toLocaleString('en')} registers every ${intervalMs} ms, gateway CPU`,
    unit: 'registers per CPU',
    budget: {
      minRatePerSecond: minRegistersPerCpuSecond,
      description: '100,000 registers per second polled at under 15 % of one core',
    },
    async startPeer() {
      const server = await startPeerProcess<{ port: number }>(
        new URL('../test/helpers/modbus-bench-server.ts', import.meta.url),
        [String(registerCount)],
        'the Modbus bench server',
      );
      return { peer: server.announcement.port, close: () => server.stop('SIGKILL') };
    },
    baseline: baselineSide(),
    subject: driverSide(),
    counted: 'registers',
    settle: { units: 3 * registerCount, what: 'the first three polls' },
    window,
    samples,
    timeoutMs,
    describeSample(side, { units, cpuSeconds, wallSeconds }) {
      const perPoll = side.requestsPerPoll();
      return (
        `${side.name}: ${perHundredThousand(units / cpuSeconds)} CPU per 100,000 registers, ` +
        `${(units / wallSeconds).toFixed(0)} registers/s at ${((cpuSeconds / wallSeconds) * 100).toFixed(1)} % of one core` +
        (perPoll !== undefined
          ? `, ${perPoll.toFixed(2)} requests per poll (minimum ${minimumRequests})`
          : '')
      );
    },
    describeMedians: (baseline, subject) =>
      `median CPU per 100,000 registers: baseline ${perHundredThousand(baseline.medianRate)}, ` +
      `tagd driver ${perHundredThousand(subject.medianRate)} ` +
      `(${((100_000 / subject.medianRate) * 100).toFixed(1)} % of one core at 100,000 registers/s)`,
  }),
];
