import test from 'ava';
import { logIntervalMs, RateLimitedLog } from '../../../drivers/mqtt/rate-limited-log.js';
import { captureLogs } from '../../helpers/log-capture.js';
import { ManualClock } from '../../helpers/manual-clock.js';

test('the first line of a kind at once, then at most one a minute with the count since', (t) => {
  const clock = new ManualClock();
  const logs = captureLogs();
  const log = new RateLimitedLog(logs.logger, clock);
  for (let i = 0; i < 5; i++) log.warn('a', { topic: `t${i}` }, `bad payload ${i}`);
  log.warn('b', {}, 'other kind');
  t.deepEqual(
    logs.lines.map((line) => line.msg),
    ['bad payload 0', 'other kind'],
  );
  clock.advance(logIntervalMs - 1);
  log.warn('a', {}, 'still within the minute');
  clock.advance(1);
  log.warn('a', { topic: 't9' }, 'bad payload 9');
  const last = logs.lines.at(-1);
  t.is(last?.msg, 'bad payload 9 (5 more of this kind not logged since)');
  t.like(last, { kind: 'a', topic: 't9', suppressedSinceLastLine: 5, level: 40 });
  clock.advance(logIntervalMs);
  log.warn('a', {}, 'quiet since');
  t.is(logs.lines.at(-1)?.msg, 'quiet since');
});
