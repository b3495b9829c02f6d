import test from 'ava';
import {
  PrimaryHostState,
  parseState,
  stateTopic,
} from '../../../src/publishers/mqtt/primary-host-state.js';

test('STATE: the 3.0 JSON is read; a 2.x text or a wrong shape is a problem', (t) => {
  t.is(stateTopic('central'), 'spBv1.0/STATE/central');
  t.deepEqual(parseState(Buffer.from('{"online":true,"timestamp":1700000000000}')), {
    online: true,
    timestamp: 1_700_000_000_000,
  });
  t.regex((parseState(Buffer.from('ONLINE')) as { problem: string }).problem, /not JSON/);
  t.regex(
    (parseState(Buffer.from('{"online":"yes","timestamp":1}')) as { problem: string }).problem,
    /online/,
  );
  t.regex((parseState(Buffer.from('{"online":true}')) as { problem: string }).problem, /timestamp/);
  t.regex((parseState(Buffer.from('null')) as { problem: string }).problem, /online/);
});

test('a STATE older than the last one followed is ignored; an equal one (the Will) is not', (t) => {
  const host = new PrimaryHostState();
  t.false(host.online);
  t.is(host.update({ online: true, timestamp: 2_000 }), 'online');
  t.is(host.update({ online: true, timestamp: 1_000 }), 'ignored');
  t.true(host.online);
  // The host's Will carries its birth's timestamp.
  t.is(host.update({ online: false, timestamp: 2_000 }), 'offline');
  t.is(host.update({ online: true, timestamp: 1_999 }), 'ignored');
  t.false(host.online);
  t.is(host.update({ online: true, timestamp: 3_000 }), 'online');
  t.is(host.timestamp, 3_000);
});
