import { setTimeout as delay } from 'node:timers/promises';
import test from 'ava';
import {
  type AuditedToolCall,
  maxSummaryArguments,
  summaryWindowMs,
  ToolCallAudit,
} from '../../src/assistant/tool-call-audit.js';
import { systemClock } from '../../src/clock.js';
import { captureLogs } from '../helpers/log-capture.js';
import { ManualClock } from '../helpers/manual-clock.js';

function rig() {
  const logs = captureLogs('info');
  const clock = new ManualClock();
  const audit = new ToolCallAudit(logs.logger.child({ component: 'audit' }), { clock });
  const lines = () => logs.lines.filter((line) => line.event === 'assistant-tool');
  return { logs, clock, audit, lines };
}

function read(overrides: Partial<AuditedToolCall> = {}): AuditedToolCall {
  return {
    tool: 'readSamples',
    readOnly: true,
    account: 'agent',
    via: 'mcp',
    conversationId: 'session-1',
    args: { fullTagIds: ['Line1/Speed'] },
    outcome: 'ok',
    truncated: false,
    ...overrides,
  };
}

test('calls now and then: one line each, written at once', (t) => {
  const { clock, audit, lines } = rig();
  audit.record(read());
  t.is(lines().length, 1);
  t.like(lines()[0], {
    component: 'audit',
    event: 'assistant-tool',
    account: 'agent',
    tool: 'readSamples',
    arguments: '{"fullTagIds":["Line1/Speed"]}',
    via: 'mcp',
    conversationId: 'session-1',
    outcome: 'ok',
    msg: 'assistant tool answered: readSamples',
  });
  t.is(lines()[0]?.calls, undefined);
  clock.advance(summaryWindowMs);
  t.is(lines().length, 1, 'a window without more calls writes nothing');
  t.is(clock.pendingTimers(), 0, 'and closes');
  clock.advance(5000);
  audit.record(read({ args: { fullTagIds: ['Line1/Temp'] } }));
  t.is(lines().length, 2);
  t.is(lines()[1]?.arguments, '{"fullTagIds":["Line1/Temp"]}');
});

test('a burst of reads: the first line at once, the rest counted into one summary a window', (t) => {
  const { clock, audit, lines } = rig();
  const start = clock.now();
  audit.record(read());
  for (let call = 0; call < 5; call++) {
    clock.advance(100);
    audit.record(read({ args: { fullTagIds: [call % 2 === 0 ? 'A' : 'B'] } }));
  }
  t.is(lines().length, 1, 'nothing more before the window ends');
  clock.advance(summaryWindowMs - 500);
  t.is(lines().length, 2);
  t.like(lines()[1], {
    event: 'assistant-tool',
    account: 'agent',
    tool: 'readSamples',
    via: 'mcp',
    conversationId: 'session-1',
    outcome: 'ok',
    calls: 5,
    firstCallAt: new Date(start + 100).toISOString(),
    lastCallAt: new Date(start + 500).toISOString(),
    msg: 'assistant tool answered: readSamples, 5 more calls',
  });
  t.deepEqual(lines()[1]?.argumentsSeen, [
    { arguments: '{"fullTagIds":["A"]}', calls: 3 },
    { arguments: '{"fullTagIds":["B"]}', calls: 2 },
  ]);
  t.is(lines()[1]?.arguments, undefined, 'a field keeps one type');

  // Calls go on: a summary each window; a quiet window closes it; the next call is a line again.
  audit.record(read());
  audit.record(read({ truncated: true }));
  clock.advance(summaryWindowMs);
  t.like(lines()[2], { calls: 2, truncated: true });
  clock.advance(summaryWindowMs);
  t.is(lines().length, 3);
  t.is(clock.pendingTimers(), 0);
  audit.record(read());
  t.is(lines().length, 4);
  t.like(lines()[3], { arguments: '{"fullTagIds":["Line1/Speed"]}', outcome: 'ok' });
});

test('refusals, failures and proposals are written at once, even within a window', (t) => {
  const { audit, lines } = rig();
  audit.record(read());
  audit.record(read({ outcome: 'forbidden' }));
  audit.record(read({ outcome: 'internal' }));
  audit.record(
    read({
      tool: 'proposeWrite',
      readOnly: false,
      args: { fullTagId: 'X', value: 1, reason: 'r' },
    }),
  );
  audit.record(read({ tool: 'noSuchTool', readOnly: false, outcome: 'not-found' }));
  t.deepEqual(
    lines().map((line) => [line.tool, line.outcome, line.msg]),
    [
      ['readSamples', 'ok', 'assistant tool answered: readSamples'],
      ['readSamples', 'forbidden', 'assistant tool refused: readSamples'],
      ['readSamples', 'internal', 'assistant tool refused: readSamples'],
      ['proposeWrite', 'ok', 'assistant tool answered: proposeWrite'],
      ['noSuchTool', 'not-found', 'assistant tool refused: noSuchTool'],
    ],
  );
});

test('each account, tool, channel and conversation has a summary of its own', (t) => {
  const { clock, audit, lines } = rig();
  const variants = [
    read(),
    read({ account: 'anna' }),
    read({ tool: 'browseTags' }),
    read({ via: 'chat' }),
    read({ conversationId: 'session-2' }),
    read({ conversationId: undefined }),
  ];
  for (const call of variants) audit.record(call);
  t.is(lines().length, 6, 'each first call at once');
  for (const call of variants) audit.record(call);
  for (const call of variants) audit.record(call);
  clock.advance(summaryWindowMs);
  const summaries = lines().slice(6);
  t.is(summaries.length, 6);
  t.true(summaries.every((line) => line.calls === 2));
  t.deepEqual(
    summaries.map((line) => [line.account, line.tool, line.via, line.conversationId ?? '-']),
    variants.map((call) => [call.account, call.tool, call.via, call.conversationId ?? '-']),
  );
});

test('a summary lists at most 16 distinct arguments and counts the calls with others', (t) => {
  const { clock, audit, lines } = rig();
  audit.record(read());
  for (let call = 0; call < maxSummaryArguments + 4; call++) {
    audit.record(read({ args: { fullTagIds: [`Tag${call}`] } }));
  }
  audit.record(read({ args: { fullTagIds: ['Tag0'] } }));
  clock.advance(summaryWindowMs);
  const summary = lines()[1];
  t.is(summary?.calls, maxSummaryArguments + 5);
  const seen = (summary?.argumentsSeen ?? []) as unknown[];
  t.is(seen.length, maxSummaryArguments);
  t.like(seen[0], {
    arguments: '{"fullTagIds":["Tag0"]}',
    calls: 2,
  });
  t.is(summary?.callsWithOtherArguments, 4);
});

test('each counted call is listed under its own arguments text, however alike the calls look', (t) => {
  const { audit, lines } = rig();
  audit.record(read());
  const reused: { fullTagIds: string[] } = { fullTagIds: ['A'] };
  const long = { fullTagIds: Array.from({ length: 40 }, (_, index) => `Line1/Tag${index}`) };
  const calls: unknown[] = [
    { fullTagIds: ['A'] },
    { fullTagIds: ['A'] },
    { fullTagIds: ['A', 'B'] },
    { fullTagIds: ['B', 'A'] },
    { source: 'X', start: 'now-1h' },
    { start: 'now-1h', source: 'X' },
    { at: new Date(0) },
    { at: new Date(1000) },
    { nested: [[[[['deep']]]]] },
    { nested: [[[[['deeper']]]]] },
    { value: 1, note: undefined },
    { value: 1 },
    { value: Number.NaN },
    { value: null },
    long,
    { ...long },
    reused,
  ];
  for (const args of calls) audit.record(read({ args }));
  // The same object again after a change: its new text, not the one it had.
  reused.fullTagIds[0] = 'C';
  audit.record(read({ args: reused }));
  audit.flush();
  const expected = new Map<string, number>();
  for (const args of [...calls.slice(0, -1), { fullTagIds: ['A'] }, reused]) {
    const text = JSON.stringify(args);
    expected.set(text, (expected.get(text) ?? 0) + 1);
  }
  const seen = (lines()[1]?.argumentsSeen ?? []) as { arguments: string; calls: number }[];
  const listed = new Map(seen.map((entry) => [entry.arguments, entry.calls]));
  t.is(lines()[1]?.calls, calls.length + 1);
  t.deepEqual(listed, expected);
  t.is(
    expected.size,
    13,
    'alike texts fold (an undefined field, NaN and null), distinct ones do not',
  );
  t.is(
    listed.get('{"fullTagIds":["A"]}'),
    3,
    'the first two and the reused object before its change',
  );
  t.is(listed.get('{"fullTagIds":["C"]}'), 1, 'the reused object after its change');
});

test('flush writes the pending summaries and leaves no timer', (t) => {
  const { clock, audit, lines } = rig();
  audit.record(read());
  audit.record(read());
  audit.record(read({ account: 'anna' }));
  audit.flush();
  t.is(lines().length, 3);
  t.like(lines()[2], { account: 'agent', calls: 1 });
  t.is(clock.pendingTimers(), 0);
  audit.record(read());
  t.is(lines().length, 4, 'after a flush the next call is a line at once');
});

test('real time: the summary of a burst is written about a second later', async (t) => {
  const logs = captureLogs('info');
  const audit = new ToolCallAudit(logs.logger, { clock: systemClock });
  const lines = () => logs.lines.filter((line) => line.event === 'assistant-tool');
  const started = Date.now();
  for (let call = 0; call < 50; call++) audit.record(read());
  t.is(lines().length, 1);
  while (lines().length < 2) {
    if (Date.now() - started > 30_000) throw new Error('no summary line');
    await delay(20);
  }
  t.true(Date.now() - started >= summaryWindowMs - 5);
  t.like(lines()[1], { calls: 49 });
  audit.flush();
});
