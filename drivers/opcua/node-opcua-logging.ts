/**
 * node-opcua writes its warnings and errors straight to the console, process-wide. This module
 * routes them into tagd's log at debug level (the driver logs what matters itself, once, in
 * plain words), with every registered password blanked out in case one ever shows up in a
 * message. node-opcua-quiet.ts, imported before node-opcua loads, keeps its load-time
 * warnings off the console.
 */
import { format } from 'node:util';
import { LogLevel, setErrorLogger, setLogLevel, setWarningLogger } from 'node-opcua';
import type { Logger } from 'pino';

let target: Logger | undefined;
const secrets = new Set<string>();

function route(kind: 'warning' | 'error') {
  return (context?: unknown, ...args: unknown[]): void => {
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
 * Sends node-opcua's messages to `logger` (the last driver to call wins; they are not tied to
 * one driver anyway) and blanks `secret` out of them from now on.
 */
export function routeNodeOpcuaLogs(logger: Logger, secret?: string): void {
  target = logger.child({ component: 'node-opcua' });
  if (secret !== undefined && secret.length > 0) secrets.add(secret);
}
