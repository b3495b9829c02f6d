/**
 * The requests one tag write makes and how its failures read, on a scripted channel: the exact
 * function codes and PDUs (the pymodbus tests prove the bytes land right in a real server),
 * the FC 22 fallback sequence, and sent versus never sent.
 */
import test from 'ava';
import type { ModbusTagState } from '../../../drivers/modbus/poll-plan.js';
import { ModbusRequestError } from '../../../drivers/modbus/request-error.js';
import { modbusTagSchema } from '../../../drivers/modbus/schema.js';
import {
  type WriteChannel,
  type WriteOptions,
  writeTag,
} from '../../../drivers/modbus/tag-write.js';
import { rawWrite } from '../../../drivers/modbus/value-encoder.js';

interface Sent {
  kind: 'read' | 'write';
  functionCode: number;
  data: number[];
}

function channel(answer: (sent: Sent) => Uint8Array | ModbusRequestError = () => new Uint8Array()) {
  const sent: Sent[] = [];
  const respond = (entry: Sent) => {
    sent.push(entry);
    const result = answer(entry);
    return result instanceof ModbusRequestError ? Promise.reject(result) : Promise.resolve(result);
  };
  const fake: WriteChannel = {
    read: (_unit, functionCode, address, count) =>
      respond({ kind: 'read', functionCode, data: [address, count] }),
    write: (_unit, functionCode, data) => respond({ kind: 'write', functionCode, data: [...data] }),
  };
  return { fake, sent };
}

function tag(input: Record<string, unknown>): ModbusTagState {
  const config = modbusTagSchema.parse({ name: 'T', writable: true, ...input });
  const bitTable = config.table === 'coil' || config.table === 'discreteInput';
  return {
    fullTagId: 'Dev/T',
    config,
    type: config.type ?? (bitTable ? 'bool' : 'uint16'),
    unitId: 1,
    count: 1,
    metadata: {},
    lastReported: undefined,
    lastReportedText: undefined,
  };
}

function options(more: Partial<WriteOptions> = {}): WriteOptions & { refused: number[] } {
  const refused: number[] = [];
  return {
    multiple: false,
    noMaskWrite: new Set(),
    maskWriteRefused: (unit) => refused.push(unit),
    sent: () => {},
    queued: () => {},
    refused,
    ...more,
  };
}

async function write(t: ModbusTagState, value: unknown, c: WriteChannel, o = options()) {
  const raw = rawWrite(
    {
      type: t.type,
      order: t.config.order,
      scale: t.config.scale,
      offset: t.config.offset,
      length: t.config.length,
    },
    value,
  );
  if (typeof raw === 'string') throw new Error(raw);
  return writeTag(c, t, raw, o);
}

test('coils by FC 5 (FC 15 with multiple); registers by FC 6, FC 16 for more or with multiple', async (t) => {
  const { fake, sent } = channel();
  await write(tag({ table: 'coil', address: 0x0102 }), true, fake);
  await write(tag({ table: 'coil', address: 3 }), true, fake, options({ multiple: true }));
  await write(tag({ table: 'holdingRegister', address: 7, type: 'int16' }), -2, fake);
  await write(tag({ table: 'holdingRegister', address: 7 }), 5, fake, options({ multiple: true }));
  await write(
    tag({ table: 'holdingRegister', address: 8, type: 'float32', order: 'CDAB' }),
    1,
    fake,
  );
  t.deepEqual(sent, [
    { kind: 'write', functionCode: 5, data: [1, 2, 0xff, 0] },
    { kind: 'write', functionCode: 15, data: [0, 3, 0, 1, 1, 1] },
    { kind: 'write', functionCode: 6, data: [0, 7, 0xff, 0xfe] },
    { kind: 'write', functionCode: 16, data: [0, 7, 0, 1, 2, 0, 5] },
    // 1.0f = 0x3F800000, words swapped: 0000 3F80.
    { kind: 'write', functionCode: 16, data: [0, 8, 0, 2, 4, 0, 0, 0x3f, 0x80] },
  ]);
});

test('a bit by FC 22 with its masks; after illegal function, FC 3 then FC 6, and from then on', async (t) => {
  const { fake, sent } = channel((entry) => {
    if (entry.functionCode === 22) return ModbusRequestError.exception(1);
    if (entry.kind === 'read') return new Uint8Array([0x12, 0x30]);
    return new Uint8Array();
  });
  const o = options();
  const bit = tag({ table: 'holdingRegister', address: 4, type: 'bit', bit: 3 });
  t.deepEqual(await write(bit, true, fake, o), { status: 'Good' });
  t.deepEqual(sent, [
    { kind: 'write', functionCode: 22, data: [0, 4, 0xff, 0xf7, 0, 8] },
    { kind: 'read', functionCode: 3, data: [4, 1] },
    { kind: 'write', functionCode: 6, data: [0, 4, 0x12, 0x38] },
  ]);
  t.deepEqual(o.refused, [1]);
  sent.length = 0;
  await write(bit, false, fake, o);
  t.deepEqual(
    sent.map((entry) => entry.functionCode),
    [3, 6],
    'no second FC 22',
  );
});

test('outcomes: exception Bad, sent without answer Uncertain, never sent Bad (Disconnected)', async (t) => {
  const register = tag({ table: 'holdingRegister', address: 0 });
  const answers: [ModbusRequestError, Record<string, unknown>][] = [
    [ModbusRequestError.exception(3), { status: 'Bad', reason: 'DeviceException' }],
    [
      new ModbusRequestError('timeout', 'No answer within 1000 ms'),
      { status: 'Uncertain', reason: 'OutcomeUnknown' },
    ],
    [new ModbusRequestError('closed', 'lost'), { status: 'Uncertain', reason: 'OutcomeUnknown' }],
    [
      new ModbusRequestError('closed', 'closed', undefined, false),
      { status: 'Bad', reason: 'Disconnected' },
    ],
    [
      new ModbusRequestError('malformed', 'odd answer'),
      { status: 'Uncertain', reason: 'OutcomeUnknown' },
    ],
  ];
  for (const [error, expected] of answers) {
    const { fake } = channel(() => error);
    t.like(await write(register, 1, fake), expected, error.message);
  }
  const exception = await write(register, 1, channel(() => ModbusRequestError.exception(3)).fake);
  t.regex(exception.message ?? '', /illegal data value/);
});
