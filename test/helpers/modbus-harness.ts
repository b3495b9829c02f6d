/**
 * Shared set-up of the Modbus driver tests: a driver on a store and a manual clock, and a
 * table of typed values whose registers pymodbus's payload builder encodes (waits on real I/O:
 * `until.ts`).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ByteOrder, ModbusValueType } from '../../drivers/modbus/codec.js';
import { ModbusDriver, type ModbusDriverOptions } from '../../drivers/modbus/modbus-driver.js';
import { type ModbusDriverConfig, modbusDriverSchema } from '../../drivers/modbus/schema.js';
import type { Clock } from '../../src/clock.js';
import { TagStore } from '../../src/tags/tag-store.js';
import { captureLogs } from './log-capture.js';
import { ManualClock } from './manual-clock.js';
import { systemPython } from './modbus-peer.js';

/** A driver under test. */
export interface ModbusSubject<C extends Clock = ManualClock> {
  driver: ModbusDriver;
  store: TagStore;
  clock: C;
  logs: ReturnType<typeof captureLogs>;
  config: ModbusDriverConfig;
}

/**
 * Builds a driver named `Dev` (not started) from a partial config, on a manual clock. The
 * store's staleness sweep is not started: call `store.start()` (and stop it) to test it.
 */
export function modbusSubject(
  input: Record<string, unknown>,
  options?: ModbusDriverOptions,
): ModbusSubject;
/** The same on `clock` (e.g. the system clock for a real-time test); the sweep interval too. */
export function modbusSubject<C extends Clock>(
  input: Record<string, unknown>,
  options: ModbusDriverOptions,
  timing: { clock: C; staleSweepIntervalMs?: number },
): ModbusSubject<C>;
export function modbusSubject(
  input: Record<string, unknown>,
  options: ModbusDriverOptions = {},
  timing: { clock?: Clock; staleSweepIntervalMs?: number } = {},
): ModbusSubject<Clock> {
  const clock = timing.clock ?? new ManualClock();
  const store = new TagStore({
    clock,
    ...(timing.staleSweepIntervalMs !== undefined
      ? { staleSweepIntervalMs: timing.staleSweepIntervalMs }
      : {}),
  });
  const logs = captureLogs();
  const config = modbusDriverSchema.parse({ type: 'modbus', name: 'Dev', ...input });
  const driver = new ModbusDriver(
    config,
    { store, clock, logger: logs.logger, stateDir: '/nonexistent' },
    options,
  );
  return { driver, store, clock, logs, config };
}

/** One typed value: a tag of that type and order, and the value it must read. */
export interface TypedCase {
  name: string;
  type: Exclude<ModbusValueType, 'bool' | 'bit'>;
  order: ByteOrder;
  value: number | string;
  length?: number;
}

const orders: ByteOrder[] = ['ABCD', 'CDAB', 'BADC', 'DCBA'];
const numeric: [TypedCase['type'], number][] = [
  ['int16', -12_345],
  ['uint16', 54_321],
  ['int32', -123_456_789],
  ['uint32', 3_456_789_012],
  ['int64', -1_234_567_890_123_456],
  // Above 2^53: read back as the nearest double, 12345678901234568, with the exact decimal
  // in metadata.valueText (encodeCases passes the exact value to Python).
  ['uint64', 12_345_678_901_234_568],
  ['float32', -2.5],
  ['float64', Math.PI],
];

/** Every numeric type and string in every byte order. */
export function typedCases(): TypedCase[] {
  const cases: TypedCase[] = [];
  for (const order of orders) {
    for (const [type, value] of numeric)
      cases.push({ name: `${type}_${order}`, type, order, value });
    cases.push({ name: `string_${order}`, type: 'string', order, value: 'Pump-7', length: 4 });
  }
  return cases;
}

/** What a case reads back as. */
export function expectedValue(typed: TypedCase): number | string {
  if (typed.type === 'uint64') return 12_345_678_901_234_568;
  return typed.value;
}

/** The exact decimal a case carries in metadata.valueText (64-bit integers beyond 2^53). */
export function expectedText(typed: TypedCase): string | undefined {
  return typed.type === 'uint64' ? '12345678901234567' : undefined;
}

const payloadScript = fileURLToPath(new URL('./modbus-payload.py', import.meta.url));

/** The registers of each case, encoded by pymodbus (test/helpers/modbus-payload.py). */
export function encodeCases(cases: readonly TypedCase[]): number[][] {
  // uint64 above 2^53 must reach Python exactly: JSON from JS would round it.
  const json = `[${cases
    .map((c) =>
      JSON.stringify({ ...c, value: c.type === 'uint64' ? '@@' : c.value }).replace(
        '"@@"',
        '12345678901234567',
      ),
    )
    .join(',')}]`;
  const result = spawnSync(systemPython, [payloadScript, json], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`modbus-payload.py failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as number[][];
}

/**
 * Lays the cases out one after the other in holding registers from `start`, one register apart
 * (so the gaps are read through), and returns the tags and the register contents.
 */
export function layoutCases(
  cases: readonly TypedCase[],
  start = 0,
): { tags: Record<string, unknown>[]; hr: number[] } {
  const encoded = encodeCases(cases);
  const hr: number[] = new Array(start).fill(0);
  const tags: Record<string, unknown>[] = [];
  cases.forEach((typed, index) => {
    tags.push({
      name: `Typed/${typed.name}`,
      table: 'holdingRegister',
      address: hr.length,
      type: typed.type,
      order: typed.order,
      ...(typed.length !== undefined ? { length: typed.length } : {}),
    });
    hr.push(...(encoded[index] as number[]), 0xdead);
  });
  return { tags, hr };
}
