/**
 * The demo vehicle bus of config/can/demo-vehicle.dbc, generated deterministically: the frames
 * are encoded here by hand (bit by bit, Intel and Motorola), independently of the DBC decoder, so
 * tests can compare what the driver decodes with the values put in.
 *
 * `npx tsx test/helpers/demo-can-log.ts` rewrites config/can/demo-vehicle.candump (10 s of traffic);
 * a test checks that the committed log is exactly what this generates.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CanFrame } from '../../drivers/can/frame.js';
import { formatCandumpLine } from '../../drivers/can/transports/candump-log.js';

/** Logged time of the demo log's first frame: 2026-01-01T00:00:00Z, epoch ms. */
export const demoLogStart = Date.UTC(2026, 0, 1);
/** Length of the committed demo log, ms. */
export const demoLogDurationMs = 10_000;
/** Interface name written in the log. */
export const demoChannel = 'vcan0';

/** One generated frame with the raw values put into it, by signal name. */
export interface DemoFrame {
  /** Logged time, epoch ms. */
  time: number;
  /** Message name in the DBC. */
  message: 'EngineData' | 'VehicleDynamics' | 'BatteryStatus' | 'DoorStatus';
  frame: CanFrame;
  /** Raw (unscaled) value of every signal of the message, by signal name. */
  raw: Record<string, number>;
}

/** Sets an Intel (little-endian) signal: bit i of raw goes to bit start + i. */
export function putIntel(data: Uint8Array, start: number, length: number, raw: number): void {
  const bits = BigInt.asUintN(length, BigInt(raw));
  for (let i = 0; i < length; i++) {
    const position = start + i;
    if ((bits >> BigInt(i)) & 1n)
      data[position >> 3] = (data[position >> 3] ?? 0) | (1 << (position & 7));
  }
}

/**
 * Sets a Motorola (big-endian) signal: the most significant bit goes to the start bit (sawtooth
 * numbering: bit 7 of byte 0 is 7, bit 0 of byte 1 is 8) and the rest follow downwards within a
 * byte, then from bit 7 of the next byte.
 */
export function putMotorola(data: Uint8Array, start: number, length: number, raw: number): void {
  const bits = BigInt.asUintN(length, BigInt(raw));
  let position = start;
  for (let i = length - 1; i >= 0; i--) {
    if ((bits >> BigInt(i)) & 1n)
      data[position >> 3] = (data[position >> 3] ?? 0) | (1 << (position & 7));
    position = (position & 7) === 0 ? position + 15 : position - 1;
  }
}

const tau = 2 * Math.PI;

/** Door events: time within the log (ms) and the two door states after it. */
const doorEvents: [number, number, number][] = [
  [0, 0, 0],
  [2000, 1, 0],
  [5000, 0, 0],
  [7000, 0, 1],
  [8000, 0, 0],
];

function frame(id: number, extended: boolean, data: Uint8Array, time: number): CanFrame {
  return { id, extended, data, length: data.length, timestamp: time };
}

/**
 * The demo bus traffic, in time order: EngineData every 100 ms, VehicleDynamics every 20 ms,
 * BatteryStatus every second (extended identifier) and DoorStatus on door events (repeating
 * every 10 s).
 * @param durationMs length of the traffic, ms.
 * @param start logged time of the beginning, epoch ms.
 */
export function* demoCanFrames(
  durationMs = demoLogDurationMs,
  start = demoLogStart,
): Generator<DemoFrame> {
  for (let t = 0; t < durationMs; t++) {
    const time = start + t;
    const cycle = t % 10_000;
    if (t % 20 === 7) {
      const raw = {
        VehicleSpeed: Math.round((30 + 20 * Math.sin((tau * cycle) / 10_000)) / 0.01),
        SteeringAngle: Math.round((45 * Math.sin((tau * cycle) / 4000)) / 0.1),
        LateralAccel: Math.round((2 * Math.sin((tau * cycle) / 4000)) / 0.01),
      };
      const data = new Uint8Array(8);
      putMotorola(data, 7, 16, raw.VehicleSpeed);
      putMotorola(data, 23, 16, raw.SteeringAngle);
      putMotorola(data, 39, 12, raw.LateralAccel);
      yield { time, message: 'VehicleDynamics', frame: frame(0x200, false, data, time), raw };
    }
    if (t % 100 === 3) {
      const raw = {
        EngineSpeed: Math.round((1500 + 700 * Math.sin((tau * cycle) / 10_000)) / 0.25),
        CoolantTemp: Math.round(60 + (25 * cycle) / 10_000) + 40,
        ThrottlePosition: Math.round((20 + 15 * Math.sin((tau * cycle) / 5000)) / 0.4),
        EngineState: cycle < 300 ? 1 : 2,
      };
      const data = new Uint8Array(8);
      putIntel(data, 0, 16, raw.EngineSpeed);
      putIntel(data, 16, 8, raw.CoolantTemp);
      putIntel(data, 24, 8, raw.ThrottlePosition);
      putIntel(data, 32, 3, raw.EngineState);
      yield { time, message: 'EngineData', frame: frame(0x100, false, data, time), raw };
    }
    if (t % 1000 === 11) {
      const second = Math.floor(cycle / 1000);
      const raw = {
        PackVoltage: 3960 - 2 * second,
        PackCurrent: -Math.round((50 + 30 * Math.sin((tau * cycle) / 10_000)) / 0.1),
        StateOfCharge: 160 - second,
        ChargeMode: 2,
      };
      const data = new Uint8Array(8);
      putIntel(data, 0, 16, raw.PackVoltage);
      putIntel(data, 16, 16, raw.PackCurrent);
      putIntel(data, 32, 8, raw.StateOfCharge);
      putIntel(data, 40, 2, raw.ChargeMode);
      yield { time, message: 'BatteryStatus', frame: frame(0x18ff50e5, true, data, time), raw };
    }
    const door = doorEvents.find(([at]) => at + 13 === cycle);
    if (door !== undefined) {
      const raw = { DriverDoor: door[1], PassengerDoor: door[2] };
      const data = new Uint8Array(1);
      putIntel(data, 0, 1, raw.DriverDoor);
      putIntel(data, 1, 1, raw.PassengerDoor);
      yield { time, message: 'DoorStatus', frame: frame(0x300, false, data, time), raw };
    }
  }
}

/** The demo traffic as a `candump -L` log, one line per frame, each ended by a line feed. */
export function demoCanLog(durationMs = demoLogDurationMs, start = demoLogStart): string {
  let text = '';
  for (const { time, frame } of demoCanFrames(durationMs, start)) {
    text += `${formatCandumpLine(time, demoChannel, frame)}\n`;
  }
  return text;
}

/** Where the committed demo log lives. */
export const demoLogFile = fileURLToPath(
  new URL('../../config/can/demo-vehicle.candump', import.meta.url),
);

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(demoLogFile, demoCanLog());
}
