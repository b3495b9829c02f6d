/**
 * zod schemas of the models several routes share. Each carries an OpenAPI component id.
 */
import { z } from 'zod';
import { qualities } from '../tags/sample.js';
import { tagPathProblem } from '../tags/tag-path.js';

/** Quality reasons. */
export const qualityReasonSchema = z.enum([
  'NeverRead',
  'Disconnected',
  'Timeout',
  'DeviceException',
  'DecodeError',
  'NoUpdate',
  'NotFound',
  'Expression',
]);

/** A tag sample (spec §2.3). */
export const sampleSchema = z
  .object({
    fullTagId: z.string().describe('Tag path, `<component>/<segment>/…`.'),
    utcTimestamp: z.string().describe('When the value was read, ISO 8601 UTC.'),
    quality: z.enum(qualities as [string, ...string[]]),
    value: z
      .union([z.number(), z.boolean(), z.string()])
      .optional()
      .describe('Absent for Unavailable and Bad.'),
    reason: qualityReasonSchema.optional(),
    message: z.string().optional(),
    metadata: z
      .object({
        unit: z.string().optional(),
        description: z.string().optional(),
        source: z.string().optional(),
        valueText: z.string().optional(),
        writable: z
          .literal(true)
          .optional()
          .describe(
            'Browse answers (`GET /api/v2/Tags`) only: present when the tag may be written ' +
              '(`POST /api/v2/Tags/Write`): the profile marks it `writable` and its driver ' +
              '`allowWrites`. Absent elsewhere and for tags that cannot be written.',
          ),
        writeMin: z
          .number()
          .optional()
          .describe('Browse answers only, with `writable`: the least value a write may carry.'),
        writeMax: z
          .number()
          .optional()
          .describe('Browse answers only, with `writable`: the greatest value a write may carry.'),
      })
      .optional(),
  })
  .meta({ id: 'TagSample' });

/**
 * A `pattern` query parameter: a tag path or pattern (`*` one segment, `**` any depth),
 * default `**` (every tag). An invalid one is a 400 naming `pattern`.
 */
export const tagPatternParameter = z
  .string()
  .default('**')
  .superRefine((pattern, context) => {
    const problem = tagPathProblem(pattern, true);
    if (problem !== undefined)
      context.addIssue({ code: 'custom', message: `Invalid pattern: ${problem}.` });
  })
  .describe('Tag path or pattern: `*` matches one segment, `**` any depth. Default `**`.');
