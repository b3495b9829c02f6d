/**
 * CAN driver throughput with the demo vehicle DBC (config/can/demo-vehicle.dbc: Intel and
 * Motorola signals, signed values, value labels, an extended identifier).
 *
 * - decode + store: frames already in memory handed to the driver in batches of 64 (as an
 *   SLCAN read or a SocketCAN wake-up would), decoded with the compiled decoders and written to
 *   the tag store, against a loop that only reads every byte of the same frames. Budget: 200,000
 *   frames per second on one core (docs/architecture.md, "Budgets"), about ten times a saturated 1 Mbit/s bus.
 * - replay: a one-million-frame `candump -L` log (generated into a temporary file on first use)
 *   read from disk in 256 KiB chunks, split into lines, parsed, decoded and stored; one
 *   iteration is one pass over the whole file. Baseline: the same reads and line splitting only.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { CanDriver } from '../drivers/can/can-driver.js';
import type { CanFrame } from '../drivers/can/frame.js';
import { canDriverSchema } from '../drivers/can/schema.js';
import { formatCandumpLine, parseCandumpLine } from '../drivers/can/transports/candump-log.js';
import type { CanTransport, TransportHandlers } from '../drivers/can/transports/transport.js';
import { systemClock } from '../src/clock.js';
import { TagStore } from '../src/tags/tag-store.js';
import { demoCanFrames, demoChannel, demoLogDurationMs } from '../test/helpers/demo-can-log.js';
import type { BenchmarkCase, BenchmarkSide } from './harness.js';

/** Frames in the generated log. */
const logFrames = 1_000_000;
/** Frames per driver hand-over. */
const batchSize = 64;
/** Bytes read per read call, as the replay transport reads. */
const chunkBytes = 256 * 1024;

/** A CAN driver on a stand-in transport whose frame handler the benchmark calls directly. */
async function startDriver(): Promise<{ driver: CanDriver; handlers: TransportHandlers }> {
  let captured: TransportHandlers | undefined;
  const transport: CanTransport = {
    description: 'benchmark',
    open: async (handlers) => {
      captured = handlers;
    },
    close: async () => {},
  };
  const config = canDriverSchema.parse({
    type: 'can',
    name: 'Vehicle',
    dbcFile: fileURLToPath(new URL('../config/can/demo-vehicle.dbc', import.meta.url)),
    transport: { kind: 'socketcan', interface: 'bench0' },
  });
  const driver = new CanDriver(
    config,
    {
      store: new TagStore(),
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      stateDir: tmpdir(),
    },
    { transport },
  );
  await driver.start();
  while (captured === undefined) await new Promise((resolve) => setImmediate(resolve));
  return { driver, handlers: captured };
}

const decodeSubject = await startDriver();
const replaySubject = await startDriver();

/** Ten seconds of the demo bus (615 frames), reused in a ring. */
const ring: CanFrame[] = [...demoCanFrames()].map(({ frame }) => frame);
let sink = 0;

function decodeBaseline(): BenchmarkSide {
  let next = 0;
  return {
    name: 'read every byte of the frames',
    run(iterations) {
      let sum = 0;
      for (let n = 0; n < iterations; n++) {
        for (let i = 0; i < batchSize; i++) {
          const frame = ring[next] as CanFrame;
          next = next + 1 === ring.length ? 0 : next + 1;
          const data = frame.data;
          for (let b = 0; b < frame.length; b++) sum += data[b] as number;
        }
      }
      sink += sum;
    },
  };
}

function decodeSide(): BenchmarkSide {
  let next = 0;
  const batch: CanFrame[] = new Array(batchSize);
  return {
    name: `CanDriver: decode + TagStore.write (batches of ${batchSize})`,
    run(iterations) {
      const now = Date.now();
      for (let n = 0; n < iterations; n++) {
        for (let i = 0; i < batchSize; i++) {
          const frame = ring[next] as CanFrame;
          next = next + 1 === ring.length ? 0 : next + 1;
          frame.timestamp = now;
          batch[i] = frame;
        }
        decodeSubject.handlers.onFrames(batch);
      }
    },
  };
}

/** The generated log, written on first use and removed at exit. */
let logFile: string | undefined;

function ensureLog(): string {
  if (logFile !== undefined) return logFile;
  const folder = mkdtempSync(join(tmpdir(), 'tagd-can-bench-'));
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  const block = [...demoCanFrames()];
  const lines: string[] = [];
  for (let pass = 0; lines.length < logFrames; pass++) {
    for (const { time, frame } of block) {
      if (lines.length === logFrames) break;
      lines.push(formatCandumpLine(time + pass * demoLogDurationMs, demoChannel, frame));
    }
  }
  const file = join(folder, 'bus.log');
  writeFileSync(file, `${lines.join('\n')}\n`);
  logFile = file;
  return file;
}

/**
 * Reads the whole log in chunks and calls `line` for every line, as the replay transport does.
 * Returns the number of lines.
 */
function readLines(line: (text: string) => void): number {
  const fd = openSync(ensureLog(), 'r');
  const buffer = Buffer.allocUnsafe(chunkBytes);
  const decoder = new TextDecoder('latin1');
  let carry = '';
  let count = 0;
  try {
    for (;;) {
      const bytes = readSync(fd, buffer, 0, chunkBytes, null);
      if (bytes === 0) break;
      const text = carry + decoder.decode(buffer.subarray(0, bytes));
      let start = 0;
      for (;;) {
        const end = text.indexOf('\n', start);
        if (end < 0) break;
        line(text.slice(start, end));
        count++;
        start = end + 1;
      }
      carry = text.slice(start);
    }
  } finally {
    closeSync(fd);
  }
  return count;
}

function replayBaseline(): BenchmarkSide {
  return {
    name: 'read the log and split it into lines',
    run(iterations) {
      let length = 0;
      for (let n = 0; n < iterations; n++) {
        const lines = readLines((text) => {
          length += text.length;
        });
        if (lines !== logFrames) throw new Error(`read ${lines} lines, expected ${logFrames}`);
      }
      sink += length;
    },
  };
}

function replaySide(): BenchmarkSide {
  return {
    name: 'read, split, parseCandumpLine, decode + TagStore.write',
    run(iterations) {
      for (let n = 0; n < iterations; n++) {
        let batch: CanFrame[] = [];
        readLines((text) => {
          const parsed = parseCandumpLine(text);
          if (parsed?.kind !== 'frame') throw new Error(`not a frame: ${text}`);
          batch.push(parsed.frame);
          if (batch.length === batchSize) {
            replaySubject.handlers.onFrames(batch);
            batch = [];
          }
        });
        if (batch.length > 0) replaySubject.handlers.onFrames(batch);
      }
    },
  };
}

function verify(driver: CanDriver, what: string): void {
  const counters = driver.status().counters ?? {};
  if (!(counters.framesDecoded && counters.framesDecoded === counters.framesReceived)) {
    throw new Error(`${what}: ${JSON.stringify(counters)}`);
  }
  if (sink === Number.NEGATIVE_INFINITY) throw new Error('unreachable: keeps the sink alive');
}

export const cases: BenchmarkCase[] = [
  {
    name: 'CAN decode + store (demo vehicle DBC)',
    unit: 'frames',
    unitsPerIteration: batchSize,
    baseline: decodeBaseline(),
    subject: decodeSide(),
    budget: {
      minRatePerSecond: 200_000,
      description: '≥ 200,000 frames/s on one core',
    },
    verify: () => verify(decodeSubject.driver, 'decode'),
  },
  {
    name: 'CAN replay of a 1,000,000-frame candump log',
    unit: 'frames',
    unitsPerIteration: logFrames,
    baseline: replayBaseline(),
    subject: replaySide(),
    budget: {
      minRatePerSecond: 200_000,
      description: 'the decode budget, with reading and parsing the log on top',
    },
    verify: () => verify(replaySubject.driver, 'replay'),
  },
];
