/**
 * Staleness bounds of CAN signals: 3 × GenMsgCycleTime, scaled for multiplexed signals by the
 * switch values the DBC defines (the rounds multiply along a cascade), the profile's fallback
 * without a cycle time. Expected bounds are worked out by hand from the DBC text.
 */
import test from 'ava';
import {
  framesPerAppearance,
  signalStaleAfterMs,
  switchValueCount,
} from '../../../drivers/can/stale-bounds.js';
import type { DbcMessage } from '../../../src/dbc/model.js';
import { parseDbcText } from '../../../src/dbc/parse-dbc.js';

/** The messages of a DBC whose Diag message (id 1280) cycles every `cycleMs` (none: no cycle). */
function diag(signals: string[], extra: string[] = [], cycleMs?: number): DbcMessage {
  const database = parseDbcText(
    [
      'VERSION ""',
      'BU_: A',
      'BO_ 1280 Diag: 8 A',
      ...signals.map((line) => ` ${line}`),
      'BA_DEF_ BO_ "GenMsgCycleTime" INT 0 65535;',
      ...(cycleMs === undefined ? [] : [`BA_ "GenMsgCycleTime" BO_ 1280 ${cycleMs};`]),
      ...extra,
      '',
    ].join('\n'),
    'diag.dbc',
  );
  return database.messages[0] as DbcMessage;
}

const bounds = (message: DbcMessage, fallback?: number) =>
  Object.fromEntries(
    message.signals.map((signal) => [signal.name, signalStaleAfterMs(message, signal, fallback)]),
  );

test('simple multiplexing: 3 cycles × the number of switch values', (t) => {
  const message = diag(
    [
      'SG_ Page M : 0|8@1+ (1,0) [0|255] "" A',
      'SG_ Speed : 8|8@1+ (1,0) [0|255] "" A',
      'SG_ Voltage m1 : 16|16@1+ (1,0) [0|0] "" A',
      'SG_ Current m1 : 32|16@1+ (1,0) [0|0] "" A',
      'SG_ Temperature m2 : 16|8@1- (1,0) [0|0] "" A',
      'SG_ Pressure m7 : 16|8@1+ (1,0) [0|0] "" A',
    ],
    [],
    100,
  );
  t.is(switchValueCount(message, 'Page'), 3, 'pages 1, 2 and 7');
  t.deepEqual(bounds(message, 5000), {
    Page: 300,
    Speed: 300,
    Voltage: 900,
    Current: 900,
    Temperature: 900,
    Pressure: 900,
  });
});

test('SG_MUL_VAL_ ranges count each value once, overlaps included; cascades multiply', (t) => {
  const message = diag(
    [
      'SG_ Page M : 0|8@1+ (1,0) [0|255] "" A',
      'SG_ Counter m1 : 8|8@1+ (1,0) [0|0] "" A',
      'SG_ Level m2M : 8|8@1+ (1,0) [0|0] "" A',
      'SG_ Detail m0 : 16|8@1+ (1,0) [0|0] "" A',
      'SG_ Other m0 : 24|8@1+ (1,0) [0|0] "" A',
    ],
    [
      // Page selects Counter (1) and Level (2); Level selects Detail (0, 4–7) and Other (5).
      'SG_MUL_VAL_ 1280 Counter Page 1-1;',
      'SG_MUL_VAL_ 1280 Level Page 2-2;',
      'SG_MUL_VAL_ 1280 Detail Level 0-0, 4-7;',
      'SG_MUL_VAL_ 1280 Other Level 5-5;',
    ],
    20,
  );
  t.is(switchValueCount(message, 'Page'), 2);
  t.is(switchValueCount(message, 'Level'), 5, 'Level 0, 4, 5, 6 and 7');
  const frames = Object.fromEntries(
    message.signals.map((signal) => [signal.name, framesPerAppearance(message, signal)]),
  );
  t.deepEqual(frames, { Page: 1, Counter: 2, Level: 2, Detail: 10, Other: 10 });
  t.deepEqual(bounds(message), { Page: 60, Counter: 120, Level: 120, Detail: 600, Other: 600 });
});

test('a message without a cycle time uses the fallback, multiplexed or not', (t) => {
  const message = diag([
    'SG_ Page M : 0|8@1+ (1,0) [0|255] "" A',
    'SG_ Voltage m1 : 8|16@1+ (1,0) [0|0] "" A',
  ]);
  t.deepEqual(bounds(message, 4000), { Page: 4000, Voltage: 4000 });
  t.deepEqual(bounds(message), { Page: undefined, Voltage: undefined });
});
