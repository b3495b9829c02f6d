/**
 * node-opcua's process-wide warnings and errors go to the log of a running OPC UA driver (the
 * one registered last), with every registered password blanked; none running, they are
 * dropped. The messages are raised through node-opcua's own warning and error functions.
 */
// Before node-opcua loads: its load-time warnings stay out of the test output.
import '../../../drivers/opcua/node-opcua-quiet.js';
import { createRequire } from 'node:module';
import test from 'ava';
import { routeNodeOpcuaLogs } from '../../../drivers/opcua/node-opcua-logging.js';
import { captureLogs } from '../../helpers/log-capture.js';

type Print = (...args: unknown[]) => void;
// node-opcua-debug is node-opcua's own logging package: resolved from node-opcua, not a
// dependency of tagd.
const fromNodeOpcua = createRequire(createRequire(import.meta.url).resolve('node-opcua'));
const { make_errorLog, make_warningLog } = fromNodeOpcua('node-opcua-debug') as {
  make_errorLog: (context: string) => Print;
  make_warningLog: (context: string) => Print;
};
const warningLog = make_warningLog('tagd-test');
const errorLog = make_errorLog('tagd-test');

const routed = (logs: ReturnType<typeof captureLogs>) =>
  logs.lines.filter((line) => line.component === 'node-opcua').map((line) => line.msg);

test.serial('to the driver registered last, then the one before, then nowhere', (t) => {
  warningLog('before any driver');
  const first = captureLogs();
  const second = captureLogs();
  const unrouteFirst = routeNodeOpcuaLogs(first.logger, 'first-secret');
  const unrouteSecond = routeNodeOpcuaLogs(second.logger, 'second-secret');
  warningLog('token', 'first-secret', 'and', 'second-secret');
  errorLog('an error');
  t.deepEqual(routed(second), ['token ******** and ********', 'an error']);
  t.deepEqual(routed(first), []);
  t.like(second.lines[0], { level: 20, nodeOpcua: 'warning' });
  t.like(second.lines[1], { level: 20, nodeOpcua: 'error' });

  unrouteSecond();
  warningLog('after the second stopped, second-secret');
  t.deepEqual(routed(first), ['after the second stopped, ********'], 'secrets stay blanked');

  unrouteFirst();
  warningLog('after both stopped');
  t.is(routed(first).length, 1);
  t.is(routed(second).length, 2);
});

test.serial('a driver logging above debug gets none of them', (t) => {
  const quiet = captureLogs('info');
  const unroute = routeNodeOpcuaLogs(quiet.logger);
  t.teardown(unroute);
  warningLog('not wanted');
  t.deepEqual(quiet.lines, []);
});
