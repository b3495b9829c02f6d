import test from 'ava';
import type { CanFrame } from '../../../../drivers/can/frame.js';
import {
  formatCandumpLine,
  parseCandumpLine,
} from '../../../../drivers/can/transports/candump-log.js';

const frameOf = (line: string): CanFrame => {
  const parsed = parseCandumpLine(line);
  if (parsed?.kind !== 'frame') throw new Error(`not a frame: ${line}`);
  return parsed.frame;
};

test('a classic frame with an 11-bit identifier, time kept to the microsecond', (t) => {
  t.deepEqual(parseCandumpLine('(1436509052.249713) vcan0 123#DEADBEEF'), {
    kind: 'frame',
    time: 1_436_509_052_249.713,
    channel: 'vcan0',
    frame: {
      id: 0x123,
      extended: false,
      data: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]),
      length: 4,
      timestamp: 1_436_509_052_249.713,
    },
  });
});

test('8 identifier digits mean a 29-bit identifier, even below 0x800', (t) => {
  const frame = frameOf('(1.000000) can1 00000123#0102');
  t.is(frame.id, 0x123);
  t.true(frame.extended);
  t.deepEqual(frameOf('(1.000000) can1 1FFFFFFF#').id, 0x1fffffff);
  t.is(frameOf('(1.000000) can1 1FFFFFFF#').length, 0);
});

test('remote frames, with and without the requested length', (t) => {
  t.deepEqual(frameOf('(1.5) can0 123#R'), {
    id: 0x123,
    extended: false,
    data: new Uint8Array(0),
    length: 0,
    timestamp: 1500,
    remote: true,
  });
  t.is(frameOf('(1.5) can0 123#R7').length, 7);
  t.true(frameOf('(1.5) can0 12345678#r').remote);
});

test('CAN FD frames: ## then a flags nibble, up to 64 bytes', (t) => {
  const frame = frameOf(`(2.000001) can0 123##1${'A5'.repeat(64)}`);
  t.true(frame.fd);
  t.is(frame.length, 64);
  t.deepEqual(frame.data, new Uint8Array(64).fill(0xa5));
  t.is(frameOf('(2.0) can0 18FF50E5##0').length, 0);
  t.is(parseCandumpLine(`(2.0) can0 123##1${'00'.repeat(65)}`), undefined);
});

test('dots between bytes, a len8_dlc suffix, CR line ends and direction flags are accepted', (t) => {
  t.deepEqual(Array.from(frameOf('(3.0) can0 123#DE.AD.BE.EF').data), [0xde, 0xad, 0xbe, 0xef]);
  t.is(frameOf('(3.0) can0 123#0102030405060708_C').length, 8);
  t.is(frameOf('(3.0) can0 123#01\r').length, 1);
  t.is(frameOf('(3.0) can0 123#0102 R').length, 2);
});

test('error frames are told apart by CAN_ERR_FLAG and keep their class bits', (t) => {
  t.deepEqual(parseCandumpLine('(4.0) can0 20000040#0000000000000000'), {
    kind: 'error-frame',
    time: 4000,
    channel: 'can0',
    errorClass: 0x40,
  });
});

test('blank lines and comments are blank, not malformed', (t) => {
  for (const line of ['', '   ', '# recorded on the test bench', '\r']) {
    t.deepEqual(parseCandumpLine(line), { kind: 'blank' }, JSON.stringify(line));
  }
});

test('malformed lines are refused', (t) => {
  for (const line of [
    'vcan0 123#00',
    '(1436509052.249713 vcan0 123#00',
    '(abc) vcan0 123#00',
    '(1.0)vcan0 123#00',
    '(1.0) vcan0',
    '(1.0) vcan0 12#00',
    '(1.0) vcan0 1234#00',
    '(1.0) vcan0 800#00',
    '(1.0) vcan0 123#0',
    '(1.0) vcan0 123#0G',
    '(1.0) vcan0 123#010203040506070809',
    '(1.0) vcan0 123#01_C',
    '(1.0) vcan0 123#R9',
    '(1.0) vcan0 123##',
    '(1.0) vcan0 40000000#00',
  ]) {
    t.is(parseCandumpLine(line), undefined, line);
  }
});

test('formatCandumpLine writes lines parseCandumpLine reads back', (t) => {
  const frames: CanFrame[] = [
    { id: 0x100, extended: false, data: Uint8Array.from([0x75, 0x17]), length: 2, timestamp: 0 },
    { id: 0x18ff50e5, extended: true, data: new Uint8Array(8).fill(1), length: 8, timestamp: 0 },
    { id: 0x7, extended: false, data: new Uint8Array(0), length: 4, timestamp: 0, remote: true },
    {
      id: 0x123,
      extended: false,
      data: new Uint8Array(12).fill(9),
      length: 12,
      timestamp: 0,
      fd: true,
    },
  ];
  const time = Date.UTC(2026, 0, 1) + 3.5;
  t.deepEqual(
    frames.map((frame) => formatCandumpLine(time, 'vcan0', frame)),
    [
      '(1767225600.003500) vcan0 100#7517',
      '(1767225600.003500) vcan0 18FF50E5#0101010101010101',
      '(1767225600.003500) vcan0 007#R4',
      `(1767225600.003500) vcan0 123##1${'09'.repeat(12)}`,
    ],
  );
  for (const frame of frames) {
    t.deepEqual(frameOf(formatCandumpLine(time, 'vcan0', frame)), { ...frame, timestamp: time });
  }
});
