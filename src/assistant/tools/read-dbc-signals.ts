import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { readDbcSignal } from '../../tags/dbc-signal-reading.js';
import type { AssistantDeps } from '../assistant-deps.js';
import { defineTool } from '../assistant-tool.js';

/** Most signals one call reads. */
export const maxDbcSignalsRead = 64;

const name = z.string().min(1).max(256);

/** Latest values of the signals of a DBC message (as `GET /api/v2/DBC/{c}/{m}/{s}`). */
export function readDbcSignalsTool(deps: AssistantDeps) {
  const now = deps.now ?? Date.now;
  return defineTool({
    name: 'readDbcSignals',
    title: 'Read DBC signals',
    description: `Reads the latest decoded values of CAN signals of one DBC message of a CAN component: the named \`signals\`, or every signal of the message (at most ${maxDbcSignalsRead}). Each has its quality, physical value, unit and, when the DBC has one, the label of the value. A signal defined but not received yet is Unavailable.`,
    permission: 'DBCView',
    readOnly: true,
    input: z.strictObject({
      component: name.describe('The CAN driver (component) name.'),
      message: name.describe('The DBC message name.'),
      signals: z.array(name).min(1).max(maxDbcSignalsRead).optional().describe('Absent: all.'),
    }),
    handle: ({ component, message, signals }) => {
      const catalog = deps.dbc;
      if (catalog === undefined)
        throw new NotFoundError(`CAN component '${component.slice(0, 100)}' does not exist.`);
      const names = signals ?? catalog.signalNames(component, message);
      const at = now();
      return {
        signals: names
          .slice(0, maxDbcSignalsRead)
          .map((signal) => readDbcSignal(catalog, deps.store, at, component, message, signal)),
        ...(names.length > maxDbcSignalsRead ? { truncated: true } : {}),
      };
    },
  });
}
