/**
 * `/api/v2/Assistant/Proposals`: the writes and alarm acknowledgements assistants proposed
 * (src/assistant/proposal-service.ts), for a person to confirm or reject. Nothing an assistant
 * does reaches a device before a person confirms here.
 */
import { z } from 'zod';
import { defaultProposalExpiryMinutes } from '../../assistant/assistant-config.js';
import {
  maxPendingPerAccount,
  maxPendingProposals,
  type ProposalService,
} from '../../assistant/proposal-service.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const tag = 'Assistant';
const basePath = '/api/v2/Assistant/Proposals';

const valueSchema = z.union([z.number(), z.boolean(), z.string()]);

/** A proposal as the API shows it. */
export const proposalSchema = z
  .object({
    id: z.string(),
    kind: z
      .enum(['write', 'acknowledge'])
      .describe('`write`: a tag value; `acknowledge`: an alarm acknowledgement.'),
    fullTagId: z.string().optional().describe('The tag to write (write).'),
    value: valueSchema.optional().describe('The value to write (write).'),
    alarm: z.string().optional().describe('The alarm to acknowledge (acknowledge).'),
    reason: z.string().describe('Why, in the assistant’s words.'),
    proposedBy: z.string().describe('The account the assistant acted for.'),
    via: z.enum(['chat', 'mcp']),
    conversationId: z.string().optional().describe('The chat conversation or MCP session.'),
    createdAt: z.string().describe('ISO 8601 UTC.'),
    expiresAt: z.string().describe('ISO 8601 UTC; a Pending proposal then turns Expired.'),
    status: z.enum(['Pending', 'Confirmed', 'Rejected', 'Expired', 'Failed']),
    decidedBy: z.string().optional(),
    decidedAt: z.string().optional(),
    outcome: z
      .object({
        status: z.enum(['Good', 'Bad', 'Uncertain']).optional(),
        reason: z.string().optional(),
        message: z.string().optional(),
        state: z.string().optional(),
      })
      .optional()
      .describe(
        'Confirmed write: the write’s result (as POST /api/v2/Tags/Write answers it). Confirmed acknowledgement: the alarm’s new `state`. Failed: why nothing was done.',
      ),
  })
  .meta({ id: 'AssistantProposal' });

const idParams = z.object({ id: z.string().min(1).max(64).describe('The proposal id.') });

/** The proposal routes. */
export function assistantProposalRoutes(deps: ApiDeps): RouteDefinition[] {
  const proposals = (): ProposalService => {
    if (!deps.proposals) throw new Error('The proposal routes need the proposal service.');
    return deps.proposals;
  };
  const access = { kind: 'token', types: ['access', 'service'] } as const;
  const one = { 200: { description: 'The proposal.', schema: proposalSchema } };
  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listAssistantProposals',
      tag,
      summary: 'List assistant proposals',
      description: `The proposals the account may decide (writes with TagWrite, acknowledgements with AlertAcknowledge) and those made for it, newest first, pending or decided (the last 500 decided are kept). A proposal is made by an assistant's \`proposeWrite\` or \`proposeAcknowledge\` tool, only for tags the profile's \`assistant.writableTags\` lists (default none); it waits \`assistant.proposalExpiryMinutes\` (default ${defaultProposalExpiryMinutes}) for a person, then expires. At most ${maxPendingPerAccount} pending per account and ${maxPendingProposals} in all.`,
      access,
      responses: {
        200: {
          description: 'The proposals.',
          schema: z
            .object({ proposals: z.array(proposalSchema) })
            .meta({ id: 'AssistantProposalList' }),
        },
      },
      problems: [],
      handle: ({ principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        return { proposals: proposals().list(principal) };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{id}/Confirm`,
      operationId: 'confirmAssistantProposal',
      tag,
      summary: 'Confirm an assistant proposal: the write (or acknowledgement) is done now',
      description:
        "A person confirms: a service account cannot (403), whatever its roles. A write needs TagWrite and goes through the same writer as POST /api/v2/Tags/Write under the confirming account, with every check (the tag is writable and its driver allows writes, the value's type and writeMin/writeMax, the write rate): a check that fails answers as that route would (400 `validation-failed`, the proposal turns Failed; 429 `write-rate-exceeded`, it stays Pending) and nothing is written. The tag must still be in `assistant.writableTags`. An acknowledgement needs AlertAcknowledge. The audit line of the write or acknowledgement names the proposal, the account it was proposed for and the confirming account. A proposal no longer Pending (decided, expired) answers 409 `proposal-not-pending`.",
      access,
      params: idParams,
      responses: one,
      problems: [400, 403, 404, 409, 429],
      handle: ({ params, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        return proposals().confirm(params.id, principal);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{id}/Reject`,
      operationId: 'rejectAssistantProposal',
      tag,
      summary: 'Reject an assistant proposal: nothing is done',
      description:
        'A person with the permission that would confirm it (TagWrite for a write, AlertAcknowledge for an acknowledgement) rejects it; audited. A proposal no longer Pending answers 409 `proposal-not-pending`.',
      access,
      params: idParams,
      responses: one,
      problems: [403, 404, 409],
      handle: ({ params, principal }) => {
        if (!principal) throw new Error('unreachable: the route requires a token');
        return proposals().reject(params.id, principal);
      },
    }),
  ];
}
