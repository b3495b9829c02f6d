/**
 * A `measured` case against MQTT (bench/mqtt.bench.ts, bench/relay.bench.ts,
 * bench/sparkplug-catch-up.bench.ts): a Mosquitto started for each measurement on a loopback
 * port, by the test helper, and a fresh folder for state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { type Mosquitto, startMosquitto } from '../test/helpers/mosquitto.js';
import type { CaseInfo, CaseResult, MeasuredCase } from './harness.js';

/** What the measurement gets. */
export interface BrokerRun {
  /**
   * A stand-in for the ava context the test helpers take: only `teardown`, whose functions run
   * in reverse order once the measurement ends, whatever happens.
   */
  t: ExecutionContext;
  /** The running broker. */
  broker: Mosquitto;
  /** A fresh folder, e.g. a publisher's state directory; removed afterwards. */
  folder: string;
}

/**
 * The case `info` for bench/run.ts: starts a broker, runs `measure`, then runs the teardowns
 * registered on `t` (the broker's last) and removes the folder, whose name starts with
 * `tagd-bench-<folder>-`.
 */
export function brokerCase(
  info: CaseInfo,
  folder: string,
  measure: (run: BrokerRun) => Promise<CaseResult>,
): MeasuredCase {
  return { kind: 'measured', ...info, measure: () => withBroker(folder, measure) };
}

async function withBroker<T>(name: string, measure: (run: BrokerRun) => Promise<T>): Promise<T> {
  const teardowns: (() => unknown)[] = [];
  const t = { teardown: (fn: () => unknown) => teardowns.push(fn) } as unknown as ExecutionContext;
  const folder = mkdtempSync(join(tmpdir(), `tagd-bench-${name}-`));
  try {
    const broker = await startMosquitto(t);
    return await measure({ t, broker, folder });
  } finally {
    for (const fn of teardowns.reverse()) await fn();
    rmSync(folder, { recursive: true, force: true });
  }
}
