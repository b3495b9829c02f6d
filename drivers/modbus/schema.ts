import { z } from 'zod';
import {
  allowWritesField,
  componentNameSchema,
  relativeTagPathSchema,
  tagWriteFields,
  writeFieldIssues,
} from '../common-schema.js';
import { registerCount } from './codec.js';

/** Modbus limit of registers in one read (FC 3 and 4), from the specification. */
export const maxRegistersLimit = 125;
/** Modbus limit of coils or discrete inputs in one read (FC 1 and 2), from the specification. */
export const maxBitsLimit = 2000;

const tcpTransport = z
  .strictObject({
    kind: z.literal('tcp'),
    host: z.string().min(1).max(253).describe('Host name or IP address of the device or gateway.'),
    port: z.int().min(1).max(65_535).default(502).describe('TCP port. Default: 502.'),
  })
  .describe('Modbus TCP (MBAP framing) to a device or a TCP-to-RTU gateway.');

const rtuTransport = z
  .strictObject({
    kind: z.literal('rtu'),
    path: z.string().min(1).max(4096).describe('Serial device, e.g. `/dev/ttyUSB0`.'),
    baudRate: z.int().min(300).max(4_000_000).default(9600).describe('Line speed in baud.'),
    parity: z.enum(['none', 'even', 'odd']).default('none'),
    dataBits: z.literal([7, 8]).default(8),
    stopBits: z.literal([1, 2]).default(1),
    turnaroundMs: z
      .int()
      .min(0)
      .max(10_000)
      .default(100)
      .describe(
        'After a request times out, how long the line must stay silent (at least 3.5 character ' +
          'times) before the next request, ms; bytes arriving meanwhile (a late answer) are ' +
          'discarded and restart the wait. Default: 100.',
      ),
  })
  .describe('Modbus RTU on a serial line (the optional serialport package, loaded on first use).');

/** Where the device is reached. */
export const modbusTransportSchema = z.discriminatedUnion('kind', [tcpTransport, rtuTransport]);

/** The four Modbus data tables. */
export const modbusTableSchema = z
  .enum(['coil', 'discreteInput', 'inputRegister', 'holdingRegister'])
  .describe(
    'Data table: coils (FC 1), discrete inputs (FC 2), input (FC 4) or holding (FC 3) registers.',
  );

/**
 * How a tag's registers are turned into a value. An `int64` or `uint64` beyond 2^53 (where
 * doubles skip integers) reads as the nearest double, with the exact decimal in the sample's
 * `metadata.valueText` when the tag is unscaled (scale 1, offset 0).
 */
export const modbusValueTypeSchema = z
  .enum([
    'bool',
    'bit',
    'int16',
    'uint16',
    'int32',
    'uint32',
    'int64',
    'uint64',
    'float32',
    'float64',
    'string',
  ])
  .describe(
    '`bool` for coils and discrete inputs; `bit` (one bit of a register), integers, IEEE floats ' +
      'and `string` (`length` registers, two characters each) for registers. An `int64` or ' +
      '`uint64` beyond 2^53 reads as the nearest double; unscaled, its exact decimal is in ' +
      '`metadata.valueText`.',
  );

/** One tag: a value at an address of a table. */
export const modbusTagSchema = z
  .strictObject({
    name: relativeTagPathSchema,
    unitId: z
      .int()
      .min(0)
      .max(255)
      .optional()
      .describe(
        'Unit (slave) id of this tag, for several units behind one connection. Default: the driver’s.',
      ),
    table: modbusTableSchema,
    address: z
      .int()
      .min(0)
      .max(65_535)
      .describe('0-based address in the table (register 40001 is 0).'),
    type: modbusValueTypeSchema
      .optional()
      .describe(
        'Value type. Default: `bool` for bit tables, `uint16` for registers. An `int64` or ' +
          '`uint64` beyond 2^53 reads as the nearest double; unscaled, its exact decimal is in ' +
          '`metadata.valueText`.',
      ),
    bit: z
      .int()
      .min(0)
      .max(15)
      .optional()
      .describe('Bit of the register for type `bit`, 0 = least significant.'),
    length: z
      .int()
      .min(1)
      .max(maxRegistersLimit)
      .optional()
      .describe('Registers of a `string` (2 characters each); required for strings.'),
    order: z
      .enum(['ABCD', 'CDAB', 'BADC', 'DCBA'])
      .default('ABCD')
      .describe(
        'Byte order of the value, A = most significant byte: ABCD big-endian, CDAB word-swapped, ' +
          'BADC byte-swapped, DCBA little-endian. Strings: BADC and DCBA put the first character ' +
          'in the low byte. Default: ABCD.',
      ),
    scale: z.number().finite().default(1).describe('value = raw × scale + offset (numbers only).'),
    offset: z.number().finite().default(0).describe('Added after scaling.'),
    pollIntervalMs: z
      .int()
      .min(10)
      .max(86_400_000)
      .optional()
      .describe(
        'Poll group of the tag: how often it is read, ms. Default: the driver’s pollIntervalMs.',
      ),
    deadband: z
      .number()
      .positive()
      .optional()
      .describe(
        'A numeric value is reported changed only when it moved by more than this (in scaled ' +
          'units) from the last reported value; smaller moves re-report the last value.',
      ),
    unit: z.string().max(32).optional().describe('Engineering unit, e.g. `°C`.'),
    description: z.string().max(256).optional(),
    ...tagWriteFields,
  })
  .superRefine((tag, context) => {
    const bitTable = tag.table === 'coil' || tag.table === 'discreteInput';
    const type = tag.type ?? (bitTable ? 'bool' : 'uint16');
    if (bitTable !== (type === 'bool')) {
      context.addIssue({
        code: 'custom',
        path: ['type'],
        message: bitTable
          ? `a ${tag.table} holds a single bit: its type must be bool`
          : 'bool is for coils and discrete inputs; use bit (with bit) for a bit of a register',
      });
    }
    if (type === 'bit' && tag.bit === undefined)
      context.addIssue({ code: 'custom', path: ['bit'], message: 'type bit needs bit (0–15)' });
    if (type !== 'bit' && tag.bit !== undefined)
      context.addIssue({ code: 'custom', path: ['bit'], message: 'bit is only for type bit' });
    if (type === 'string' && tag.length === undefined)
      context.addIssue({
        code: 'custom',
        path: ['length'],
        message: 'a string needs length (registers)',
      });
    if (type !== 'string' && tag.length !== undefined)
      context.addIssue({ code: 'custom', path: ['length'], message: 'length is only for strings' });
    if (tag.address + registerCount(type, tag.length ?? 1) > 65_536)
      context.addIssue({
        code: 'custom',
        path: ['address'],
        message: 'the value runs past address 65535',
      });
    if (tag.deadband !== undefined && (type === 'bool' || type === 'bit' || type === 'string'))
      context.addIssue({
        code: 'custom',
        path: ['deadband'],
        message: 'deadband is for numeric types',
      });
    // Input registers and discrete inputs are read-only in the Modbus data model: no function
    // code writes them, so a writable one is a profile mistake, not a runtime refusal.
    if (tag.writable && (tag.table === 'inputRegister' || tag.table === 'discreteInput'))
      context.addIssue({
        code: 'custom',
        path: ['writable'],
        message: `the table ${tag.table} is read-only in Modbus: only coils and holding registers are writable`,
      });
    if (
      (tag.writeMin !== undefined || tag.writeMax !== undefined) &&
      (type === 'bool' || type === 'bit' || type === 'string')
    )
      context.addIssue({
        code: 'custom',
        path: [tag.writeMin !== undefined ? 'writeMin' : 'writeMax'],
        message: 'writeMin and writeMax are for numeric types',
      });
    for (const issue of writeFieldIssues(tag)) context.addIssue({ code: 'custom', ...issue });
  });

/** Profile entry of a Modbus driver: one connection (TCP or a serial line) and its tags. */
export const modbusDriverSchema = z
  .strictObject({
    type: z.literal('modbus'),
    name: componentNameSchema,
    enabled: z.boolean().default(true),
    transport: modbusTransportSchema,
    allowWrites: allowWritesField,
    writeFunctions: z
      .enum(['single', 'multiple'])
      .optional()
      .describe(
        'Function codes of writes: `single` writes one coil with FC 5 and one register with ' +
          'FC 6; `multiple` uses FC 15 and FC 16 for those too, for devices that lack FC 5 and ' +
          '6. Values of several registers always go by FC 16. Default: single.',
      ),
    unitId: z
      .int()
      .min(0)
      .max(255)
      .default(1)
      .describe('Unit (slave) id of the device. Default: 1.'),
    pollIntervalMs: z
      .int()
      .min(10)
      .max(86_400_000)
      .default(1000)
      .describe('How often tags without their own pollIntervalMs are read, ms. Default: 1000.'),
    timeoutMs: z
      .int()
      .min(10)
      .max(60_000)
      .default(1000)
      .describe(
        'Longest wait for a connection or for the answer to one request, ms. Default: 1000.',
      ),
    timeoutsBeforeReconnect: z
      .int()
      .min(1)
      .max(1000)
      .default(3)
      .describe(
        'Consecutive unanswered requests after which the connection is re-opened. Default: 3.',
      ),
    maxConcurrentRequests: z
      .int()
      .min(1)
      .max(16)
      .default(1)
      .describe(
        'Requests in flight at once on a TCP connection, for devices that accept more than one ' +
          '(RTU is always 1). Default: 1.',
      ),
    maxRegistersPerRequest: z
      .int()
      .min(1)
      .max(maxRegistersLimit)
      .default(maxRegistersLimit)
      .describe('Most registers read by one request (FC 3, 4). Default and maximum: 125.'),
    maxBitsPerRequest: z
      .int()
      .min(1)
      .max(maxBitsLimit)
      .default(maxBitsLimit)
      .describe(
        'Most coils or discrete inputs read by one request (FC 1, 2). Default and maximum: 2000.',
      ),
    maxGap: z
      .int()
      .min(0)
      .max(maxBitsLimit)
      .default(16)
      .describe(
        'Unused addresses worth reading through to join two tags into one request. Default: 16.',
      ),
    reconnectDelayMs: z
      .int()
      .min(10)
      .max(600_000)
      .default(1000)
      .describe('First wait before reconnecting, ms; doubles on each failure. Default: 1000.'),
    maxReconnectDelayMs: z
      .int()
      .min(10)
      .max(3_600_000)
      .default(30_000)
      .describe('Longest wait between reconnection attempts, ms. Default: 30000.'),
    staleAfterMs: z
      .int()
      .positive()
      .max(86_400_000)
      .optional()
      .describe(
        'A tag not updated for this long turns Stale, ms. Without it (or when it is longer) a tag ' +
          'turns Stale after max(1000, 3 × its poll interval, poll interval + ⌈requests of all ' +
          'groups / concurrent requests⌉ × timeoutMs).',
      ),
    tags: z.array(modbusTagSchema).min(1).max(100_000),
  })
  .superRefine((config, context) => {
    if (config.maxReconnectDelayMs < config.reconnectDelayMs) {
      context.addIssue({
        code: 'custom',
        path: ['maxReconnectDelayMs'],
        message: 'maxReconnectDelayMs must be at least reconnectDelayMs',
      });
    }
    // Duplicate tag names are the profile's rule, for every driver type (validate-profile.ts).
    config.tags.forEach((tag, index) => {
      const bitTable = tag.table === 'coil' || tag.table === 'discreteInput';
      if (bitTable) return;
      const count = registerCount(tag.type ?? 'uint16', tag.length ?? 1);
      if (count > config.maxRegistersPerRequest) {
        context.addIssue({
          code: 'custom',
          path: ['tags', index, 'length'],
          message: `the value spans ${count} registers, more than maxRegistersPerRequest (${config.maxRegistersPerRequest})`,
        });
      }
    });
  });

/** A validated Modbus driver entry. */
export type ModbusDriverConfig = z.infer<typeof modbusDriverSchema>;
/** A validated Modbus tag. */
export type ModbusTagConfig = z.infer<typeof modbusTagSchema>;
/** A validated Modbus transport. */
export type ModbusTransportConfig = z.infer<typeof modbusTransportSchema>;
/** One of the four Modbus tables. */
export type ModbusTable = z.infer<typeof modbusTableSchema>;
