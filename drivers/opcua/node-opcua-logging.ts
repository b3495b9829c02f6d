/**
 * node-opcua writes its warnings and errors straight to the console. Its only hooks
 * (setWarningLogger, setErrorLogger) are process-wide and its messages do not say which client
 * they come from, so one sink for the whole process is all node-opcua allows. This module is
 * that sink: it sends the messages into the log of a running OPC UA driver at debug level (the
 * driver logs what matters itself, once, in plain words), with every registered password
 * blanked out in case one ever shows up in a message. Drivers register while they run and
 * unregister when they stop; with none running the messages are dropped.
 * node-opcua-quiet.ts, imported before node-opcua loads, keeps its load-time warnings off the
 * console.
 */
import { format } from 'node:util';
import { LogLevel, setErrorLogger, setLogLevel, setWarningLogger } from 'node-opcua';
import type { Logger } from 'pino';

/** The loggers of the running drivers, in the order they registered. */
const active = new Set<Logger>();
/**
 * Every password a driver registered, kept for the life of the process: a client being closed
 * may still report something after its driver has stopped, while another driver runs.
 */
const secrets = new Set<string>();

function route(kind: 'warning' | 'error') {
  return (context?: unknown, ...args: unknown[]): void => {
    // The driver that started last: the messages belong to no driver in particular.
    let target: Logger | undefined;
    for (const logger of active) target = logger;
    if (target === undefined || !target.isLevelEnabled('debug')) return;
    let text = format(...args);
    for (const secret of secrets) text = text.replaceAll(secret, '********');
    const where = context as { filename?: string } | undefined;
    target.debug({ nodeOpcua: kind, source: where?.filename }, text);
  };
}

setWarningLogger(route('warning'));
setErrorLogger(route('error'));
if (process.env.TAGD_NODEOPCUA_QUIETED === '1') {
  // Loaded now: back to warnings and errors, which go to the tagd log from here on.
  setLogLevel(LogLevel.Warning);
  delete process.env.NODEOPCUA_LOG_LEVEL;
  delete process.env.TAGD_NODEOPCUA_QUIETED;
}

/**
 * Sends node-opcua's messages to `logger` (as `component: node-opcua`) while it is registered,
 * and blanks `secret` out of them from now on. When several drivers are registered, the one
 * registered last gets them.
 * @returns the function that unregisters `logger` (call it when the driver stops).
 */
export function routeNodeOpcuaLogs(logger: Logger, secret?: string): () => void {
  const target = logger.child({ component: 'node-opcua' });
  active.add(target);
  if (secret !== undefined && secret.length > 0) secrets.add(secret);
  return () => {
    active.delete(target);
  };
}
