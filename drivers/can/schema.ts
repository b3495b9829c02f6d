import { z } from 'zod';
import { componentNameSchema } from '../common-schema.js';

const relativeFile = (what: string) =>
  z
    .string()
    .min(1)
    .max(4096)
    .describe(`${what} A relative path is resolved from the folder of the profile file.`);

const socketcanTransport = z
  .strictObject({
    kind: z.literal('socketcan'),
    interface: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,15}$/, 'must be a network interface name of 1 to 15 characters')
      .describe('Linux CAN network interface, e.g. `can0`, already up at its bitrate.'),
  })
  .describe('Linux SocketCAN interface (through the optional socketcan package).');

const slcanTransport = z
  .strictObject({
    kind: z.literal('slcan'),
    port: z
      .string()
      .min(1)
      .max(4096)
      .refine((port) => !port.startsWith('socket://') || /^socket:\/\/.+:\d{1,5}\/?$/.test(port), {
        message: 'a TCP port must be written socket://host:port',
      })
      .describe(
        'Serial device of the adapter (e.g. `/dev/ttyACM0`), or `socket://host:port` for the ' +
          'same protocol over TCP.',
      ),
    bitrate: z
      .literal([
        10_000, 20_000, 50_000, 100_000, 125_000, 250_000, 500_000, 750_000, 800_000, 1_000_000,
      ])
      .describe(
        'CAN bitrate in bit/s, sent as S0–S8 (S7 is 750 kbit/s on CANable, 800 kbit/s in the ' +
          'Lawicel specification).',
      ),
    baudRate: z
      .int()
      .min(300)
      .max(4_000_000)
      .default(115_200)
      .describe('Serial line speed in baud; ignored over TCP and by USB CDC adapters.'),
    timestamps: z
      .boolean()
      .default(false)
      .describe(
        "Ask the adapter to timestamp frames (Z1) and use its times; otherwise the host's arrival time.",
      ),
  })
  .describe('Lawicel/SLCAN adapter (CANable, CANtact, USBtin…) on a serial port or over TCP.');

const replayTransport = z
  .strictObject({
    kind: z.literal('replay'),
    file: relativeFile('`candump -L` log to play.'),
    speed: z
      .number()
      .positive()
      .max(1000)
      .default(1)
      .describe('Playback speed factor: 1 plays at the recorded pace, 2 twice as fast.'),
    loop: z.boolean().default(false).describe('Start over after the last frame.'),
    channel: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe('Play only the frames logged on this interface (second column). Default: all.'),
  })
  .describe('Plays a recorded candump log as if the bus were live.');

/** Where the frames come from. */
export const canTransportSchema = z.discriminatedUnion('kind', [
  socketcanTransport,
  slcanTransport,
  replayTransport,
]);

/** Profile entry of a CAN driver: one bus, decoded with one DBC file. */
export const canDriverSchema = z
  .strictObject({
    type: z.literal('can'),
    name: componentNameSchema,
    enabled: z.boolean().default(true),
    dbcFile: relativeFile(
      'DBC file describing the messages and signals of the bus; each signal becomes the tag ' +
        '`<name>/<message>/<signal>`.',
    ),
    transport: canTransportSchema,
    staleAfterMs: z
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(
        'A signal not updated for this long turns Stale, for messages whose DBC gives no ' +
          'GenMsgCycleTime (those use 3 × the cycle time, times the number of multiplexer ' +
          'values for a multiplexed signal). Default: never.',
      ),
    reconnectDelayMs: z
      .int()
      .min(10)
      .max(600_000)
      .default(1000)
      .describe('First wait before reconnecting after a lost adapter or bus-off, ms; doubles.'),
    maxReconnectDelayMs: z
      .int()
      .min(10)
      .max(3_600_000)
      .default(30_000)
      .describe('Longest wait between reconnection attempts, ms.'),
  })
  .refine((config) => config.maxReconnectDelayMs >= config.reconnectDelayMs, {
    message: 'maxReconnectDelayMs must be at least reconnectDelayMs',
    path: ['maxReconnectDelayMs'],
  });

/** A validated CAN driver entry. */
export type CanDriverConfig = z.infer<typeof canDriverSchema>;
/** A validated CAN transport setting. */
export type CanTransportConfig = z.infer<typeof canTransportSchema>;
