import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { createLogger } from '../../src/logger.js';
import { RecentEvents } from '../../src/recent-events.js';

/** A logged line, parsed. */
export type LogLine = Record<string, unknown> & { msg?: string; level: number };

/** A tagd logger whose JSON lines are kept in memory, for tests that read the log. */
export function captureLogs(level = 'debug'): {
  logger: Logger;
  lines: LogLine[];
  text: () => string;
  /** The rings of recent events the logger tees into, as `tagd start` makes them. */
  recentEvents: RecentEvents;
} {
  const raw: string[] = [];
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      const text = chunk.toString();
      raw.push(text);
      for (const line of text.split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  const recentEvents = new RecentEvents();
  const logger = createLogger({ level, pretty: false, destination, recentEvents });
  return { logger, lines, text: () => raw.join(''), recentEvents };
}
