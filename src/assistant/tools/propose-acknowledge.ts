import { z } from 'zod';
import type { AssistantDeps } from '../assistant-deps.js';
import { defineTool } from '../assistant-tool.js';
import { reasonInput } from './tool-schemas.js';

/** Proposes acknowledging an alarm, for a person to confirm; offered when alarms exist. */
export function proposeAcknowledgeTool(deps: AssistantDeps) {
  return defineTool({
    name: 'proposeAcknowledge',
    title: 'Propose an alarm acknowledgement',
    description:
      'Proposes acknowledging an alarm. This does NOT acknowledge it: a person with the AlertAcknowledge permission confirms or rejects the proposal before it expires. Answers the proposal (its id, status Pending, expiresAt).',
    permission: 'AlertAcknowledge',
    readOnly: false,
    input: z.strictObject({
      alarm: z.string().min(1).max(128).describe('The alarm name.'),
      reason: reasonInput,
    }),
    handle: async ({ alarm, reason }, caller) => {
      const proposals = deps.proposals;
      if (proposals === undefined)
        throw new Error('proposeAcknowledge needs the proposal service.');
      return {
        proposal: await proposals.propose(caller, { kind: 'acknowledge', alarm, reason }),
        note: 'Nothing was acknowledged. A person must confirm this proposal before it expires.',
      };
    },
  });
}
