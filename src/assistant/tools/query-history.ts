import { z } from 'zod';
import { ConflictError, ValidationError } from '../../errors.js';
import { readLogged } from '../../queries/logged-reads.js';
import type { TagQueryBinding } from '../../queries/tag-query-binding.js';
import { parseTimePoint, resolveTimePoint } from '../../queries/time-range.js';
import type { AssistantDeps } from '../assistant-deps.js';
import { defineTool } from '../assistant-tool.js';
import { aggregationWindowInput, tagPatternInput, timePointInput } from './tool-schemas.js';

/** Most values one history query answers. */
export const maxHistoryValues = 2000;
/** Most tags one history query reads. */
export const maxHistoryTags = 50;

/**
 * Logged values of tags over a time range, raw or aggregated, read as a TagQuerySet's Logged
 * binding reads them (src/queries/logged-reads.ts).
 */
export function queryHistoryTool(deps: AssistantDeps) {
  const now = deps.now ?? Date.now;
  return defineTool({
    name: 'queryHistory',
    title: 'Query tag history',
    description: `Reads logged samples of the tags a path or pattern matches (at most ${maxHistoryTags} tags) between \`start\` and \`stop\`. \`seriesMode\` Raw (default) answers each logged sample with its stored quality; Aggregated answers one value per \`aggregationWindow\` (aligned to the UTC epoch, stamped with the window start) computed by \`aggregationFunction\` (Avg, Min, Max, Sum, Count, First, Last) over the Good and Stale samples. At most \`maxValues\` values (default 500, at most ${maxHistoryValues}): beyond, \`truncated\` is true; aggregate over longer windows or narrow the range. Needs a history database in the profile.`,
    permission: 'TagView',
    readOnly: true,
    input: z
      .strictObject({
        source: tagPatternInput,
        start: timePointInput.describe('Start of the range: `now-8h`, an ISO 8601 time…'),
        stop: timePointInput.default('now').describe('End of the range. Default `now`.'),
        seriesMode: z.enum(['Raw', 'Aggregated']).default('Raw'),
        aggregationWindow: aggregationWindowInput.optional().describe('Required when Aggregated.'),
        aggregationFunction: z
          .enum(['Avg', 'Min', 'Max', 'Sum', 'Count', 'First', 'Last'])
          .optional()
          .describe('Required when Aggregated.'),
        maxValues: z.int().min(1).max(maxHistoryValues).default(500),
      })
      .superRefine((input, context) => {
        if (input.seriesMode !== 'Aggregated') return;
        for (const field of ['aggregationWindow', 'aggregationFunction'] as const) {
          if (input[field] === undefined) {
            context.addIssue({
              code: 'custom',
              path: [field],
              message: 'Required when Aggregated.',
            });
          }
        }
      }),
    handle: async (input) => {
      const history = deps.history;
      if (history === undefined) {
        throw new ConflictError(
          'history-not-configured',
          'No history database is configured in the profile: only current values can be read.',
        );
      }
      const at = now();
      const point = (text: string) => {
        const parsed = parseTimePoint(text);
        return parsed.ok ? resolveTimePoint(parsed.value, at) : Number.NaN;
      };
      if (point(input.stop) < point(input.start)) {
        throw new ValidationError('The input is invalid.', [
          { path: 'stop', message: 'Must not be before start.' },
        ]);
      }
      const binding: TagQueryBinding = {
        source: input.source,
        store: 'Logged',
        timeRangeStart: input.start,
        timeRangeStop: input.stop,
        seriesMode: input.seriesMode,
        ...(input.aggregationWindow !== undefined
          ? { aggregationWindow: input.aggregationWindow }
          : {}),
        ...(input.aggregationFunction !== undefined
          ? { aggregationFunction: input.aggregationFunction }
          : {}),
      };
      const mark = await history.lastSeq();
      const resolved = await history.resolve(input.source);
      const tagIds = resolved.slice(0, maxHistoryTags);
      const answer = await readLogged(history, binding, tagIds, at, mark, input.maxValues);
      return {
        values: answer.samples,
        ...(answer.over || resolved.length > tagIds.length ? { truncated: true } : {}),
        ...(resolved.length > tagIds.length
          ? { note: `${resolved.length} tags match; only the first ${maxHistoryTags} were read.` }
          : {}),
      };
    },
  });
}
