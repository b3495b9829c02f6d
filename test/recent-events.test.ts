import test from 'ava';
import { createLogger } from '../src/logger.js';
import { RecentEvents } from '../src/recent-events.js';

function logged(options: { auditEvents?: number; logEvents?: number; level?: string } = {}) {
  const recentEvents = new RecentEvents(options);
  const lines: string[] = [];
  const logger = createLogger({
    level: options.level ?? 'info',
    pretty: false,
    destination: { write: (line: string) => lines.push(line) },
    recentEvents,
  });
  return { logger, recentEvents, lines };
}

test('audit lines and warnings and errors are kept; other info lines are not; secrets stay masked', (t) => {
  const { logger, recentEvents, lines } = logged();
  const audit = logger.child({ component: 'audit' });
  audit.info({ event: 'sign-in', username: 'ada', password: 'hunter2' }, 'signed in');
  logger.child({ component: 'PLC1' }).warn({ host: '10.0.0.5' }, 'connection lost');
  logger.info('tagd ready');
  logger.child({ component: 'history' }).error('disk full');
  const events = recentEvents.list();
  t.deepEqual(
    events.map((event) => [event.id, event.kind, event.level, event.component, event.message]),
    [
      [1, 'audit', 'info', undefined, 'signed in'],
      [2, 'log', 'warn', 'PLC1', 'connection lost'],
      [3, 'log', 'error', 'history', 'disk full'],
    ],
  );
  t.deepEqual(events[0]?.details, { event: 'sign-in', username: 'ada', password: '********' });
  t.false(JSON.stringify(events).includes('hunter2'));
  t.is(lines.length, 4, 'the log itself still gets every line');
  t.deepEqual(
    recentEvents.list('log', 2).map((event) => event.id),
    [3],
  );
});

test('each ring is bounded on its own: a flood of warnings never pushes the audit out', (t) => {
  const { logger, recentEvents } = logged({ auditEvents: 2, logEvents: 3 });
  const audit = logger.child({ component: 'audit' });
  audit.info({ event: 'sign-in', username: 'ada' }, 'signed in');
  for (let index = 0; index < 100; index++) logger.warn({ index }, 'flood');
  audit.info({ event: 'tag-write' }, 'write');
  audit.info({ event: 'sign-out' }, 'signed out');
  t.deepEqual(
    recentEvents.list('audit').map((event) => event.details.event),
    ['tag-write', 'sign-out'],
  );
  t.deepEqual(
    recentEvents.list('log').map((event) => event.details.index),
    [97, 98, 99],
  );
});

test('a line marked inEventView: false (the first start password) is never kept', (t) => {
  const { logger, recentEvents, lines } = logged();
  logger.warn({ inEventView: false }, "First start: created account 'admin' with password x");
  t.deepEqual(recentEvents.list(), []);
  t.is(lines.length, 1, 'the log has it');
});

test('details too large to show are replaced by a note', (t) => {
  const { logger, recentEvents } = logged();
  logger.warn({ blob: 'x'.repeat(10_000) }, 'big');
  t.regex(String(recentEvents.list()[0]?.details.note), /left out; see the log/);
});

test('only a line of the audit component is an audit event: an object that merely holds one is not', (t) => {
  const { logger, recentEvents } = logged();
  const driver = logger.child({ component: 'PLC1' });
  driver.info({ peer: { component: 'audit' } }, 'an info line quoting an audit binding');
  driver.warn({ peer: { component: 'audit' } }, 'a warning quoting one');
  logger.info({ note: 'a { before', component: 'audit' }, 'the root logging an audit line');
  recentEvents.write('{"msg":"a line pino did not write","component":"audit","level":30}\n');
  t.deepEqual(
    recentEvents.list().map((event) => [event.kind, event.message]),
    [
      ['log', 'a warning quoting one'],
      ['audit', 'the root logging an audit line'],
      ['audit', 'a line pino did not write'],
    ],
  );
  t.deepEqual(
    recentEvents.list('audit').map((event) => event.message),
    ['the root logging an audit line', 'a line pino did not write'],
  );
});
