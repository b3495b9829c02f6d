/**
 * DBC decoding throughput (issue 6 "Speed"): frames per second on one core, budget at least
 * 200,000 (about ten times a saturated 1 Mbit/s bus).
 *
 * A powertrain-like DBC of eight messages and 31 signals (Intel and Motorola, signed and
 * unsigned, scaled, 1-bit flags with value labels, a multiplexed J1939 message, float32 and a
 * 40-bit counter) is parsed once. 1,000 frames with random payloads cycle through the messages
 * and are handed over in batches of 50, as a transport delivers them. Both cases have the same
 * baseline: a loop that only reads every byte of every frame, the least any decoder must do.
 *
 * 1. `dbc: decode` looks up the message's compiled decoder by identifier and decodes the frame.
 * 2. `dbc: decode + TagStore write` also does what the CAN driver does with the result: one
 *    Sample per decoded signal (value, unit, raw, valueText in metadata), and one TagStore.write
 *    per batch into a store where every signal's tag is defined.
 */
import { compileDatabaseDecoders, type MessageDecoder } from '../src/dbc/decode.js';
import { parseDbcText } from '../src/dbc/parse-dbc.js';
import type { Sample, SampleMetadata } from '../src/tags/sample.js';
import { TagStore } from '../src/tags/tag-store.js';
import type { BenchmarkCase, BenchmarkSide } from './harness.js';

/** Frames handed over per batch (one transport read). */
const batchSize = 50;
/** Distinct prebuilt frames, cycled. */
const frameCount = 1000;
/** The budget: frames per second on one core. */
const minFramesPerSecond = 200_000;

const dbcText = [
  'VERSION ""',
  'BU_: ECU BMS IMU GPS',
  'BO_ 256 EngineStatus: 8 ECU',
  ' SG_ Rpm : 0|16@1+ (0.25,0) [0|16383.75] "rpm" Vector__XXX',
  ' SG_ Torque : 16|12@1- (0.5,0) [-1024|1023.5] "Nm" Vector__XXX',
  ' SG_ Coolant : 31|8@0+ (1,-40) [-40|215] "degC" Vector__XXX',
  ' SG_ Throttle : 32|8@1+ (0.4,0) [0|100] "%" Vector__XXX',
  ' SG_ Running : 48|1@1+ (1,0) [0|1] "" Vector__XXX',
  ' SG_ Gear : 52|4@1- (1,0) [-1|6] "" Vector__XXX',
  'BO_ 257 WheelSpeeds: 8 ECU',
  ' SG_ FrontLeft : 7|16@0+ (0.01,0) [0|655.35] "km/h" Vector__XXX',
  ' SG_ FrontRight : 23|16@0+ (0.01,0) [0|655.35] "km/h" Vector__XXX',
  ' SG_ RearLeft : 39|16@0+ (0.01,0) [0|655.35] "km/h" Vector__XXX',
  ' SG_ RearRight : 55|16@0+ (0.01,0) [0|655.35] "km/h" Vector__XXX',
  'BO_ 258 Battery: 8 BMS',
  ' SG_ Voltage : 0|16@1+ (0.001,0) [0|65.535] "V" Vector__XXX',
  ' SG_ Current : 16|16@1- (0.01,0) [-327.68|327.67] "A" Vector__XXX',
  ' SG_ StateOfCharge : 32|8@1+ (0.5,0) [0|100] "%" Vector__XXX',
  ' SG_ Temperature : 40|8@1- (1,0) [-128|127] "degC" Vector__XXX',
  ' SG_ Fault : 48|2@1+ (1,0) [0|3] "" Vector__XXX',
  'BO_ 2566844926 Diagnostics: 8 ECU',
  ' SG_ Page M : 0|8@1+ (1,0) [0|255] "" Vector__XXX',
  ' SG_ Hours m0 : 8|32@1+ (0.05,0) [0|0] "h" Vector__XXX',
  ' SG_ MinTemp m1 : 8|16@1- (0.1,0) [0|0] "degC" Vector__XXX',
  ' SG_ MaxTemp m1 : 24|16@1- (0.1,0) [0|0] "degC" Vector__XXX',
  ' SG_ Serial : 47|24@0+ (1,0) [0|0] "" Vector__XXX',
  'BO_ 259 Imu: 8 IMU',
  ' SG_ AccelX : 0|16@1- (0.001,0) [-32.768|32.767] "g" Vector__XXX',
  ' SG_ AccelY : 16|16@1- (0.001,0) [-32.768|32.767] "g" Vector__XXX',
  ' SG_ AccelZ : 32|16@1- (0.001,0) [-32.768|32.767] "g" Vector__XXX',
  ' SG_ YawRate : 48|16@1- (0.01,0) [-327.68|327.67] "deg/s" Vector__XXX',
  'BO_ 260 Position: 8 GPS',
  ' SG_ Latitude : 0|32@1- (1e-07,0) [-90|90] "deg" Vector__XXX',
  ' SG_ Longitude : 32|32@1- (1e-07,0) [-180|180] "deg" Vector__XXX',
  'BO_ 261 Hydraulics: 8 ECU',
  ' SG_ Pressure : 0|32@1- (1,0) [0|0] "bar" Vector__XXX',
  ' SG_ Flow : 32|32@1- (1,0) [0|0] "l/min" Vector__XXX',
  'BO_ 262 Counters: 8 ECU',
  ' SG_ Odometer : 0|40@1+ (0.1,0) [0|0] "km" Vector__XXX',
  ' SG_ Counter : 40|4@1+ (1,0) [0|15] "" Vector__XXX',
  ' SG_ Checksum : 56|8@1+ (1,0) [0|255] "" Vector__XXX',
  'VAL_ 256 Running 0 "Stopped" 1 "Running" ;',
  'VAL_ 256 Gear -1 "Reverse" 0 "Neutral" 1 "First" 2 "Second" ;',
  'VAL_ 258 Fault 0 "None" 1 "Warning" 2 "Error" 3 "Critical" ;',
  'SIG_VALTYPE_ 261 Pressure : 1;',
  'SIG_VALTYPE_ 261 Flow : 1;',
].join('\n');

const database = parseDbcText(dbcText, 'bench.dbc');
const component = 'can0';

interface BenchFrame {
  id: number;
  extended: boolean;
  data: Uint8Array;
  length: number;
}

/** Deterministic payloads (xorshift32), so every run decodes the same values. */
function buildFrames(): BenchFrame[] {
  let state = 0x2545f491;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return state >>> 0;
  };
  const frames: BenchFrame[] = [];
  for (let i = 0; i < frameCount; i++) {
    const message = database.messages[i % database.messages.length];
    if (message === undefined) throw new Error('the bench DBC has no messages');
    const data = Uint8Array.from({ length: message.length }, () => next() & 0xff);
    // The multiplexer page alternates between the two defined pages.
    if (message.name === 'Diagnostics') data[0] = (i >> 3) & 1;
    frames.push({ id: message.id, extended: message.extended, data, length: message.length });
  }
  return frames;
}

const frames = buildFrames();
const batchesPerRound = frameCount / batchSize;
const signalCount = database.messages.reduce((n, m) => n + m.signals.length, 0);

/** Hands out consecutive batches of frames, endlessly. */
class FrameFeed {
  private batch = 0;
  /** Start index of the next batch. */
  next(): number {
    const start = this.batch * batchSize;
    this.batch = (this.batch + 1) % batchesPerRound;
    return start;
  }
}

/** Reads every payload byte: the least a decoder must do. */
function readBytesBaseline(): BenchmarkSide & { checksum(): number } {
  const feed = new FrameFeed();
  let sum = 0;
  return {
    name: `read every byte of every frame (${frameCount} frames, batches of ${batchSize})`,
    run(iterations) {
      for (let n = 0; n < iterations; n++) {
        const start = feed.next();
        for (let f = start; f < start + batchSize; f++) {
          const frame = frames[f] as BenchFrame;
          const data = frame.data;
          for (let i = 0; i < frame.length; i++) sum += data[i] as number;
        }
      }
    },
    checksum: () => sum,
  };
}

const decoders = compileDatabaseDecoders(database);

/** Decoder lookup as the CAN driver does it: one map per frame format. */
function lookup(frame: BenchFrame): MessageDecoder {
  const decoder = decoders.get(frame.id, frame.extended);
  if (decoder === undefined) throw new Error(`no decoder for ${frame.id}`);
  return decoder;
}

function decodeOnly(): BenchmarkCase {
  let decoded = 0;
  const feed = new FrameFeed();
  return {
    name: 'dbc: decode',
    unit: 'frames',
    unitsPerIteration: batchSize,
    baseline: readBytesBaseline(),
    subject: {
      name: `compiled decoders, ${database.messages.length} messages, ${signalCount} signals`,
      run(iterations) {
        for (let n = 0; n < iterations; n++) {
          const start = feed.next();
          for (let f = start; f < start + batchSize; f++) {
            const frame = frames[f] as BenchFrame;
            const results = lookup(frame).decode(frame.data, frame.length);
            for (let s = 0; s < results.length; s++) {
              if (results[s]?.status === 'decoded') decoded++;
            }
          }
        }
      },
    },
    budget: {
      minRatePerSecond: minFramesPerSecond,
      description: 'issue 6: at least 200,000 frames per second on one core',
    },
    verify() {
      if (decoded === 0) throw new Error('no signal was decoded');
    },
  };
}

function decodeAndWrite(): BenchmarkCase {
  const store = new TagStore();
  const tagIds = new Map<MessageDecoder, string[]>();
  for (const decoder of decoders.all) {
    tagIds.set(
      decoder,
      decoder.message.signals.map(
        (signal) => `${component}/${decoder.message.name}/${signal.name}`,
      ),
    );
  }
  store.define([...tagIds.values()].flat().map((fullTagId) => ({ fullTagId })));
  const feed = new FrameFeed();
  let written = 0;
  let second = 0;
  return {
    name: 'dbc: decode + TagStore write',
    unit: 'frames',
    unitsPerIteration: batchSize,
    baseline: readBytesBaseline(),
    subject: {
      name: `decode, one Sample per signal, TagStore.write per batch of ${batchSize} frames`,
      run(iterations) {
        for (let n = 0; n < iterations; n++) {
          const start = feed.next();
          // One timestamp per batch, as the driver formats it once per distinct frame time.
          const utcTimestamp = new Date(Date.UTC(2025, 0, 1, 0, 0, second++ % 60)).toISOString();
          const samples: Sample[] = [];
          for (let f = start; f < start + batchSize; f++) {
            const frame = frames[f] as BenchFrame;
            const decoder = lookup(frame);
            const ids = tagIds.get(decoder) as string[];
            const results = decoder.decode(frame.data, frame.length);
            for (let s = 0; s < results.length; s++) {
              const result = results[s];
              if (result === undefined || result.status !== 'decoded') continue;
              const raw = typeof result.raw === 'bigint' ? Number(result.raw) : result.raw;
              const unit = result.signal.unit;
              const metadata: SampleMetadata & { raw: number } =
                unit === '' ? { raw } : { unit, raw };
              if (result.valueText !== undefined) metadata.valueText = result.valueText;
              samples.push({
                fullTagId: ids[s] as string,
                utcTimestamp,
                quality: 'Good',
                value: result.value,
                metadata,
              });
            }
          }
          written += samples.length;
          store.write(samples);
        }
      },
    },
    budget: {
      minRatePerSecond: minFramesPerSecond,
      description: 'issue 6: at least 200,000 frames per second on one core',
    },
    verify() {
      if (written === 0) throw new Error('no sample was written');
      const sample = store.get(`${component}/EngineStatus/Rpm`);
      if (sample?.quality !== 'Good' || typeof sample.value !== 'number') {
        throw new Error('the store holds no decoded Rpm');
      }
    },
  };
}

/** The cases of this file. */
export const cases: BenchmarkCase[] = [decodeOnly(), decodeAndWrite()];
