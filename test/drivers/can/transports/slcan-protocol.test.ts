import test from 'ava';
import {
  formatSlcanFrame,
  parseSlcanFrame,
  SlcanTimestampMapper,
  slcanBitrates,
} from '../../../../drivers/can/transports/slcan-protocol.js';

const at = 1_767_225_600_000;

test('a standard data frame: t, 3 id digits, DLC, data', (t) => {
  t.deepEqual(parseSlcanFrame('t1232DEAD', at), {
    frame: {
      id: 0x123,
      extended: false,
      data: Uint8Array.from([0xde, 0xad]),
      length: 2,
      timestamp: at,
    },
  });
  t.deepEqual(parseSlcanFrame('t7FF0', at), {
    frame: { id: 0x7ff, extended: false, data: new Uint8Array(0), length: 0, timestamp: at },
  });
});

test('an extended data frame: T, 8 id digits; lower-case hex is accepted', (t) => {
  t.deepEqual(parseSlcanFrame('T18ff50e53780f0a', at), {
    frame: {
      id: 0x18ff50e5,
      extended: true,
      data: Uint8Array.from([0x78, 0x0f, 0x0a]),
      length: 3,
      timestamp: at,
    },
  });
});

test('remote frames carry the requested length and no payload', (t) => {
  t.deepEqual(parseSlcanFrame('r1234', at), {
    frame: {
      id: 0x123,
      extended: false,
      data: new Uint8Array(0),
      length: 4,
      timestamp: at,
      remote: true,
    },
  });
  t.deepEqual(parseSlcanFrame('R000001238', at)?.frame, {
    id: 0x123,
    extended: true,
    data: new Uint8Array(0),
    length: 8,
    timestamp: at,
    remote: true,
  });
});

test('a trailing 4-digit timestamp is taken apart from the data', (t) => {
  t.deepEqual(parseSlcanFrame('t1001AAEA5F', at), {
    frame: { id: 0x100, extended: false, data: Uint8Array.from([0xaa]), length: 1, timestamp: at },
    adapterTimestamp: 59_999,
  });
  t.is(parseSlcanFrame('r1230 04D2'.replace(' ', ''), at)?.adapterTimestamp, 1234);
});

test('CAN FD lines (d/b, D/B) use the FD lengths of DLC 9–15', (t) => {
  const data = 'AB'.repeat(12);
  const parsed = parseSlcanFrame(`b1239${data}`, at);
  t.is(parsed?.frame.length, 12);
  t.true(parsed?.frame.fd);
  t.deepEqual(parsed?.frame.data, new Uint8Array(12).fill(0xab));
  const long = parseSlcanFrame(`D12345678F${'01'.repeat(64)}`, at);
  t.is(long?.frame.length, 64);
  t.true(long?.frame.extended);
});

test('malformed lines are refused, never half-parsed', (t) => {
  for (const line of [
    '',
    'x1232DEAD',
    't12',
    't1232DEA', // one hex digit short
    't1232DEADB', // one too many
    `t1239${'00'.repeat(9)}`, // classic DLC 9
    't8001AA', // 11-bit id over 0x7FF
    'T200000001AA', // 29-bit id over 0x1FFFFFFF
    't1G32DEAD',
    't1232DEZD',
    't1001AAEA60', // timestamp 60000 is past the minute
  ]) {
    t.is(parseSlcanFrame(line, at), undefined, line);
  }
});

test('formatSlcanFrame writes what parseSlcanFrame reads, as python-can writes it', (t) => {
  t.is(
    formatSlcanFrame({
      id: 0x100,
      extended: false,
      data: Uint8Array.from([1, 0xab]),
      length: 2,
      timestamp: 0,
    }),
    't1002' + '01AB',
  );
  t.is(
    formatSlcanFrame({
      id: 0x18ff50e5,
      extended: true,
      data: new Uint8Array(0),
      length: 0,
      timestamp: 0,
    }),
    'T18FF50E50',
  );
  t.is(
    formatSlcanFrame(
      { id: 0x7, extended: false, data: new Uint8Array(0), length: 3, timestamp: 0, remote: true },
      0x4d2,
    ),
    'r007304D2',
  );
  const frame = {
    id: 0x321,
    extended: false,
    data: Uint8Array.from([9, 8, 7]),
    length: 3,
    timestamp: at,
  };
  t.deepEqual(parseSlcanFrame(formatSlcanFrame(frame), at)?.frame, frame);
});

test('the bitrate commands are S0–S8 as in the Lawicel table', (t) => {
  t.deepEqual(
    [...slcanBitrates],
    [
      [10_000, 'S0'],
      [20_000, 'S1'],
      [50_000, 'S2'],
      [100_000, 'S3'],
      [125_000, 'S4'],
      [250_000, 'S5'],
      [500_000, 'S6'],
      [750_000, 'S7'],
      [800_000, 'S7'],
      [1_000_000, 'S8'],
    ],
  );
});

test('adapter timestamps keep the adapter spacing and unwrap at the minute', (t) => {
  const mapper = new SlcanTimestampMapper();
  // First frame anchors: adapter 59,000 ms ↔ host `at`.
  t.is(mapper.map(59_000, at), at);
  // Arrives 40 ms late in a burst: the adapter's spacing (10 ms) wins.
  t.is(mapper.map(59_010, at + 50), at + 10);
  // The counter wrapped: 200 means 60,200, 1,200 ms after the anchor.
  t.is(mapper.map(200, at + 1_230), at + 1_200);
  // Two minutes and a bit later: the wrap nearest to the host's elapsed time is taken.
  t.is(mapper.map(59_500, at + 120_520), at + 120_500);
});

test('adapter timestamps never lie in the future and re-anchor when they drift', (t) => {
  const mapper = new SlcanTimestampMapper(1000);
  mapper.map(1000, at);
  // The adapter clock runs ahead by 20 ms: capped at the arrival time.
  t.is(mapper.map(1520, at + 500), at + 500);
  // 5 s of drift (an adapter reset): start over from the host time.
  t.is(mapper.map(10, at + 5000), at + 5000);
  t.is(mapper.map(110, at + 5100), at + 5100);
  mapper.reset();
  t.is(mapper.map(42, at + 9000), at + 9000);
});
