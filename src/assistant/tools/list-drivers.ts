import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import type { AssistantDeps } from '../assistant-deps.js';
import { defineTool } from '../assistant-tool.js';

/** The drivers and their state (as `GET /api/v2/Drivers`): never their configuration. */
export function listDriversTool(deps: AssistantDeps) {
  return defineTool({
    name: 'listDrivers',
    title: 'List drivers',
    description:
      'Lists the drivers (one per device or bus; the first segment of their tags) with their state (Running, Reconnecting, Stopped, Failed), since when, the last error, counters and their tags per quality; or one driver by `name`. Nothing of their configuration (addresses, credentials) is shown.',
    permission: 'DriverView',
    readOnly: true,
    input: z.strictObject({
      name: z.string().min(1).max(256).optional().describe('One driver; absent: every driver.'),
    }),
    handle: ({ name }) => {
      if (name === undefined) return { drivers: deps.drivers?.list() ?? [] };
      const report = deps.drivers?.get(name);
      if (report === undefined) throw new NotFoundError(`No driver named '${name.slice(0, 100)}'.`);
      return { drivers: [report] };
    },
  });
}
