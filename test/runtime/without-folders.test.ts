import test from 'ava';
import { withoutFolders } from '../../src/runtime/without-folders.js';

test('absolute paths keep their last segment only', (t) => {
  t.is(
    withoutFolders('Cannot read the DBC file /etc/tagd/can/bus.dbc: no such file.'),
    'Cannot read the DBC file bus.dbc: no such file.',
  );
  t.is(
    withoutFolders('/home/plant/x/shadow:2:1: the file defines no message (BO_).'),
    'shadow:2:1: the file defines no message (BO_).',
  );
  t.is(
    withoutFolders('Cannot open /dev/ttyUSB0: Permission denied'),
    'Cannot open ttyUSB0: Permission denied',
  );
  t.is(
    withoutFolders("replay log '/var/lib/tagd/x.candump' ended"),
    "replay log 'x.candump' ended",
  );
  t.is(withoutFolders('two: /a/b and (/c/d/e)'), 'two: b and (e)');
});

test('URLs, addresses, relative paths and a lone slash are left alone', (t) => {
  for (const text of [
    'opc.tcp://plc.local:4840/UA/Server refused',
    'connect ECONNREFUSED 192.168.10.30:502',
    'socket://adapter:3333/ is down',
    'can/bus.dbc and ~/x/y and a/b',
    'ratio 3/4, path /',
    '/rootfile alone',
  ]) {
    t.is(withoutFolders(text), text);
  }
});
