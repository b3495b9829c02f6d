/**
 * The profile's `assistant` section: what an assistant (the MCP server, the chat) may do. It is
 * read per request, so a profile reload applies at once.
 */
import { z } from 'zod';
import { tagPathProblem } from '../tags/tag-path.js';
import { assistantModelSchema } from './chat/model-config.js';

/** Default life of a pending proposal: 5 minutes. */
export const defaultProposalExpiryMinutes = 5;

const writablePattern = z
  .string()
  .min(1)
  .max(256)
  .superRefine((source, context) => {
    const problem = tagPathProblem(source, true);
    if (problem !== undefined) {
      context.addIssue({ code: 'custom', message: `Invalid tag path or pattern: ${problem}` });
    }
  })
  .describe('A tag path, or a pattern where * is one segment and ** any depth.');

/** The `assistant` section of the profile. */
export const assistantConfigSchema = z
  .strictObject({
    writableTags: z
      .array(writablePattern)
      .max(1000)
      .default([])
      .describe(
        'The tags an assistant may propose a write to (paths and patterns). Default: none, so every proposeWrite is refused. A proposal is never a write: a person with TagWrite confirms it, and the write then passes every check of POST /api/v2/Tags/Write (writable, writeMin/writeMax, the driver allows writes, the rate limit).',
      ),
    proposalExpiryMinutes: z
      .number()
      .min(0.5)
      .max(1440)
      .default(defaultProposalExpiryMinutes)
      .describe(
        `Minutes a proposal waits for a person to confirm or reject it; then it expires and can no longer be confirmed. Default ${defaultProposalExpiryMinutes}.`,
      ),
    mcp: z
      .strictObject({
        enabled: z
          .boolean()
          .optional()
          .describe(
            'Whether /api/v2/Mcp answers. Absent (default): only on connections to a loopback address (the local listener, 127.0.0.1 or ::1), never through a listener bound to the plant network. true: on every listener. false: nowhere.',
          ),
      })
      .prefault({})
      .describe('The Model Context Protocol server at /api/v2/Mcp.'),
    model: assistantModelSchema.optional(),
  })
  .describe(
    "AI assistants: the MCP server, the chat's model, and what an assistant may propose (never write) on its own.",
  );

/** The validated `assistant` section. */
export type AssistantConfig = z.infer<typeof assistantConfigSchema>;

/** The section with every default, for deps built without a profile (tests, OpenAPI). */
export const defaultAssistantConfig: AssistantConfig = assistantConfigSchema.parse({});
