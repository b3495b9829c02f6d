/** Input pieces the tools share, validated as the REST routes validate them. */
import { z } from 'zod';
import { parseAggregationWindow, parseTimePoint } from '../../queries/time-range.js';
import { tagPathProblem } from '../../tags/tag-path.js';

/** One tag path (no wildcards). */
export const tagPathInput = z
  .string()
  .min(1)
  .max(256)
  .superRefine((text, context) => {
    const problem = tagPathProblem(text);
    if (problem !== undefined)
      context.addIssue({ code: 'custom', message: `Invalid tag path: ${problem}.` });
  })
  .describe('A tag path, e.g. `Line1/Oven/Temperature`.');

/** A tag path or pattern. */
export const tagPatternInput = z
  .string()
  .min(1)
  .max(256)
  .superRefine((text, context) => {
    const problem = tagPathProblem(text, true);
    if (problem !== undefined) {
      context.addIssue({ code: 'custom', message: `Invalid tag path or pattern: ${problem}.` });
    }
  })
  .describe('A tag path, or a pattern: `*` matches one segment, `**` any depth (`Line1/**`).');

/** A time point as the TagQuerySet bindings take it. */
export const timePointInput = z
  .string()
  .max(64)
  .superRefine((text, context) => {
    const result = parseTimePoint(text);
    if (!result.ok) context.addIssue({ code: 'custom', message: result.message });
  })
  .describe('`now`, `now-<n><s|m|h|d>` (e.g. `now-8h`) or an ISO 8601 time with zone.');

/** An aggregation window as the TagQuerySet bindings take it. */
export const aggregationWindowInput = z
  .string()
  .max(64)
  .superRefine((text, context) => {
    const result = parseAggregationWindow(text);
    if (!result.ok) context.addIssue({ code: 'custom', message: result.message });
  })
  .describe('`10s`, `5m`, `1h`, `1d` or an ISO 8601 duration (`PT5M`).');

/** A value to write, as POST /api/v2/Tags/Write takes it. */
export const writeValueInput = z
  .union([
    z.number().refine(Number.isFinite, 'NaN and infinities cannot be written.'),
    z.boolean(),
    z.string().max(4096),
  ])
  .describe('The value in engineering units: a number, a boolean or a string.');

/** Why the assistant proposes an action: shown to the person who decides. */
export const reasonInput = z
  .string()
  .min(1)
  .max(1000)
  .describe('Why, in one or two sentences, for the person who confirms or rejects.');
