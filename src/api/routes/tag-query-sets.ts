import { z } from 'zod';
import { ConflictError, type FieldError, ValidationError } from '../../errors.js';
import type { HistoryService } from '../../history/history-service.js';
import { KeyedQueue } from '../../queries/keyed-queue.js';
import {
  countLogged,
  type LoggedAnswer,
  readLogged,
  readLoggedDelta,
} from '../../queries/logged-reads.js';
import { matchLocalSources } from '../../queries/match-local-sources.js';
import {
  defaultMaxConcurrentQueries,
  defaultMaxConcurrentQueriesPerAccount,
  QueryAdmission,
} from '../../queries/query-admission.js';
import {
  defaultMaxDeltaEntries,
  defaultMaxDeltaEntriesPerAccount,
  defaultMaxMatchesPerRequest,
  defaultQueryLimits,
} from '../../queries/query-limits.js';
import { type BindingValues, queryResponseJson } from '../../queries/query-response-json.js';
import type { TagQueryBinding } from '../../queries/tag-query-binding.js';
import { type TagQuerySet, TagQuerySetRegistry } from '../../queries/tag-query-set-registry.js';
import {
  parseAggregationWindow,
  parseTimePoint,
  resolveTimePoint,
  type TimePoint,
} from '../../queries/time-range.js';
import type { Sample } from '../../tags/sample.js';
import { tagPathProblem } from '../../tags/tag-path.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { sampleSchema } from '../schemas.js';

/** Most bindings one set may hold. */
export const maxBindingsPerSet = 1_000;
/** Most values one response carries (POST refuses beyond it, Delta pages). */
export const maxValuesPerResponse = 100_000;

const boundsText =
  'Work and memory are bounded (profile `queries`, defaults given): a request that would take ' +
  `more than ${defaultMaxMatchesPerRequest.toLocaleString('en')} tag matches (each distinct ` +
  'pattern compared with every tag of the store, each Local binding counting every tag it ' +
  'matches) is refused with 413 query-too-large, before the work is done. Each set keeps one ' +
  'Delta entry per tag that each of its distinct Local sources matches (bindings repeating a ' +
  `source share them); an account's sets hold at most ` +
  `${defaultMaxDeltaEntriesPerAccount.toLocaleString('en')} entries and all sets together ` +
  `${defaultMaxDeltaEntries.toLocaleString('en')}: beyond, 429 query-capacity-reached with ` +
  'Retry-After (the time until the first of the sets holding them may expire), or 413 ' +
  'query-too-large when one set alone is over the account share. At most ' +
  `${defaultMaxConcurrentQueriesPerAccount} TagQuerySet requests (create, replace, Delta) of ` +
  `one account, and ${defaultMaxConcurrentQueries} of all accounts, are answered at once (from ` +
  'validation until the answer is written): beyond, 429 query-capacity-reached with ' +
  'Retry-After 1.';

const historyDetail =
  'historical data is available only when a time-series database is configured in the ' +
  'profile; without one only realtime data is available (use store Local).';

const source = z
  .string()
  .superRefine((text, context) => {
    const problem = tagPathProblem(text, true);
    if (problem !== undefined) {
      context.addIssue({ code: 'custom', message: `Invalid tag path or pattern: ${problem}.` });
    }
  })
  .describe('Tag path, or pattern with `*` (one segment) and `**` (any depth) segments.');

const timePoint = z
  .string()
  .max(64)
  .superRefine((text, context) => {
    const result = parseTimePoint(text);
    if (!result.ok) context.addIssue({ code: 'custom', message: result.message });
  });

const aggregationWindow = z
  .string()
  .max(64)
  .superRefine((text, context) => {
    const result = parseAggregationWindow(text);
    if (!result.ok) context.addIssue({ code: 'custom', message: result.message });
  });

/** One binding of a query set (spec §2.2). */
export const tagQueryBindingSchema = z
  .strictObject({
    source,
    store: z
      .enum(['Local', 'Logged'])
      .describe('`Local`: current values. `Logged`: history from the time-series database.'),
    timeRangeStart: timePoint
      .optional()
      .describe(
        'Logged only, required there. `now`, `now-<n><s|m|h|d>` (e.g. `now-15m`) or an ISO 8601 ' +
          'timestamp with zone (e.g. `2026-01-31T08:00:00Z`).',
      ),
    timeRangeStop: timePoint
      .optional()
      .describe('Logged only, required there. Same formats as timeRangeStart; not before it.'),
    seriesMode: z
      .enum(['Raw', 'Aggregated'])
      .optional()
      .describe('Logged only (`Raw` is also accepted on Local). Default `Raw`.'),
    aggregationWindow: aggregationWindow
      .optional()
      .describe(
        'Required with seriesMode Aggregated. `10s`, `5m`, `1h`, `1d` or an ISO 8601 duration ' +
          '(`PT5M`); years and months are refused. Aggregated values carry the window start.',
      ),
    aggregationFunction: z
      .enum(['Avg', 'Min', 'Max', 'Sum', 'Count', 'First', 'Last'])
      .optional()
      .describe('Required with seriesMode Aggregated.'),
  })
  .superRefine((binding, context) => {
    const problem = (path: keyof TagQueryBinding, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    const aggregated = binding.seriesMode === 'Aggregated';
    if (binding.store === 'Local') {
      // Refused rather than ignored: a client sending a range expects history, not a snapshot.
      for (const field of ['timeRangeStart', 'timeRangeStop'] as const) {
        if (binding[field] !== undefined) problem(field, 'Applies only to Logged bindings.');
      }
      if (aggregated) problem('seriesMode', 'Aggregated applies only to Logged bindings.');
    } else {
      for (const field of ['timeRangeStart', 'timeRangeStop'] as const) {
        if (binding[field] === undefined) problem(field, 'Required for a Logged binding.');
      }
    }
    for (const field of ['aggregationWindow', 'aggregationFunction'] as const) {
      if (aggregated && binding[field] === undefined) {
        problem(field, 'Required when seriesMode is Aggregated.');
      } else if (!aggregated && binding[field] !== undefined) {
        problem(field, 'Applies only when seriesMode is Aggregated.');
      }
    }
  })
  .meta({ id: 'TagQueryBinding' });

/** Body of POST /api/v2/TagQuerySet (spec §2.2). */
export const tagQuerySetRequestSchema = z
  .strictObject({
    srcSetId: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('An existing set of this account: its bindings are replaced. Absent: a new set.'),
    bindings: z
      .array(tagQueryBindingSchema)
      .min(1, 'At least one binding is required.')
      .max(
        maxBindingsPerSet,
        `At most ${maxBindingsPerSet.toLocaleString('en')} bindings per set.`,
      ),
  })
  .meta({ id: 'TagQuerySetRequest' });

/** A tag sample answered for one binding. */
export const queryValueSchema = sampleSchema
  .extend({
    binding: z
      .number()
      .int()
      .min(0)
      .describe('Index into the bindings of the request that made or last replaced the set.'),
  })
  .meta({ id: 'QueryValue' });

/** Response of POST /api/v2/TagQuerySet and of its Delta. */
export const tagQuerySetResponseSchema = z
  .object({
    srcSetId: z
      .string()
      .describe('The set’s identifier: poll its Delta, or send it to replace it.'),
    values: z.array(queryValueSchema),
    truncated: z
      .literal(true)
      .optional()
      .describe(
        `Delta only, present when more values changed than one response carries ` +
          `(${maxValuesPerResponse.toLocaleString('en')}): poll again for the rest.`,
      ),
  })
  .meta({ id: 'TagQuerySetResponse' });

type TagQuerySetRequest = z.infer<typeof tagQuerySetRequestSchema>;

const sourceSetParams = z.object({
  sourceSet: z.string().min(1).max(128).describe('The srcSetId of the set.'),
});

/** Query sets of tags, and their change polls. */
export function tagQuerySetsRoutes(deps: ApiDeps): RouteDefinition[] {
  const now = deps.now ?? Date.now;
  const registry = new TagQuerySetRegistry({ now });
  // Read per request: the limits in force are those of the profile as it stands.
  const limits = () => deps.profile?.current().queries ?? defaultQueryLimits;
  const queue = new KeyedQueue();
  // Answers are built in pieces with turns in between, so parallel requests would overlap.
  const admission = new QueryAdmission();
  return [
    defineRoute({
      method: 'post',
      path: '/api/v2/TagQuerySet',
      operationId: 'createTagQuerySet',
      tag: 'TagQuerySet',
      summary: 'Create or replace a query set and read its values',
      description:
        'Answers the current sample of every tag each Local binding matches, tagged with the ' +
        'index of its binding. A pattern may match many tags. A source naming a tag that does ' +
        'not exist (yet) is not an error: it contributes nothing now, and its first sample ' +
        'arrives through Delta once the tag exists, as with tags that later match a pattern. ' +
        `A set belongs to the account that made it, lives 10 minutes after its last poll, and ` +
        `an account holds at most 100 (409 limit-reached). At most ` +
        `${maxBindingsPerSet.toLocaleString('en')} bindings; a request whose answer would ` +
        `exceed ${maxValuesPerResponse.toLocaleString('en')} values is refused with 400 (the ` +
        'detail says how many it would be): the bindings or time ranges must be narrowed, so ' +
        'it is a validation failure of the request, not a size problem of its body (413). ' +
        'A Logged binding answers the samples logged in its time range (Raw; each with its ' +
        'stored quality), or one value per window of `aggregationWindow` aligned to the UTC ' +
        'epoch (Aggregated; utcTimestamp = window start; Bad and Unavailable samples are ' +
        'skipped, Count counts good values, a window of only skipped samples is Bad without a ' +
        'value). Without a history section in the profile, Logged bindings answer 409 ' +
        'history-not-configured; an unreachable history database answers 503 ' +
        `history-unavailable. ${boundsText}`,
      access: { kind: 'permission', permission: 'TagView' },
      body: tagQuerySetRequestSchema,
      responses: {
        200: { description: 'The set and its values.', schema: tagQuerySetResponseSchema },
      },
      problems: [400, 404, 409, 413, 429, 503],
      handle: async ({ body, principal, context }): Promise<string> => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const ownerId = principal.user.id;
        const rangeErrors = rangeOrderErrors(body.bindings, now());
        if (rangeErrors.length > 0) {
          throw new ValidationError('The request body is invalid.', rangeErrors);
        }
        const existing =
          body.srcSetId !== undefined ? registry.use(ownerId, body.srcSetId) : undefined;
        // A replacement waits for polls of the set in progress (see KeyedQueue).
        const answer = async (): Promise<string> => {
          const logged = body.bindings.findIndex((binding) => binding.store === 'Logged');
          const history = deps.history;
          if (logged >= 0 && history === undefined) {
            throw new ConflictError(
              'history-not-configured',
              `bindings[${logged}] uses store Logged, but ${historyDetail}`,
            );
          }
          const bindings = body.bindings as TagQueryBinding[];
          const queryLimits = limits();
          const local = await matchLocalSources(deps.store, bindings, {
            maxMatches: queryLimits.maxMatchesPerRequest,
          });
          let total = local.values;
          const loggedAnswers = new Map<number, LoggedAnswer>();
          if (history !== undefined && logged >= 0) {
            const at = now();
            // Taken before reading: the next Delta answers what is logged after this position.
            const mark = await history.lastSeq();
            const tagIds = await resolveLogged(history, bindings);
            for (const [index, binding] of bindings.entries()) {
              if (binding.store !== 'Logged') continue;
              const ids = tagIds.get(binding.source) ?? [];
              const budget = Math.max(0, maxValuesPerResponse - total);
              const answer = await readLogged(history, binding, ids, at, mark, budget);
              if (answer.over) {
                throw await tooManyLoggedValues(
                  history,
                  bindings,
                  tagIds,
                  at,
                  local.values,
                  loggedAnswers,
                  { index, budget },
                );
              }
              loggedAnswers.set(index, answer);
              total += answer.samples.length;
            }
          }
          if (total > maxValuesPerResponse) throw tooManyValues(total, true, logged >= 0);
          // Nothing awaits from the admission to the commit, so the admission holds for it.
          let entries = 0;
          for (const samples of local.bySource.values()) entries += samples.length;
          registry.admit(ownerId, existing, entries, queryLimits);
          let set: TagQuerySet;
          if (existing) {
            existing.replaceBindings(bindings);
            set = existing;
          } else set = registry.create(ownerId, bindings);
          const changes = set.changes(local.bySource);
          changes.commit();
          registry.account(set);
          for (const [index, answer] of loggedAnswers) set.setLoggedCursor(index, answer.cursor);
          return queryResponseJson(set.id, answered(bindings, changes.samples, loggedAnswers));
        };
        const json = await admission.run(ownerId, context.res, () =>
          existing ? queue.run(existing.id, answer) : answer(),
        );
        // Serialized here, in pieces (see queryResponseJson), rather than by koa in one go.
        context.type = 'application/json';
        return json;
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v2/TagQuerySet/Delta/{sourceSet}',
      operationId: 'getTagQuerySetDelta',
      tag: 'TagQuerySet',
      summary: 'Values changed since the previous poll of a set',
      description:
        'For each Local binding, the samples whose value, quality or timestamp changed since ' +
        'the previous poll of the set (or since it was created or replaced), including tags ' +
        'that appeared since and match a binding. For each Logged binding, the samples that ' +
        'entered its range since the previous poll: logged since (late samples included), or ' +
        'logged before and only now covered by a stop that slides with now (a sample stamped ' +
        'ahead of the gateway clock, or after a `now-5m` stop); for Aggregated the windows ' +
        'holding such samples, recomputed. Nothing changed: an empty list. A poll ' +
        'extends the set’s life by 10 minutes. Another account’s set, or an expired one, is ' +
        `404. At most ${maxValuesPerResponse.toLocaleString('en')} values per response: when ` +
        'more changed, `truncated` is true and the rest come with the next polls (for Logged ' +
        'bindings the rest as of the cut poll, each once, before newer values). The bounds of ' +
        'the create apply to every poll too (the store may have grown since): over them, 413 ' +
        'query-too-large or 429 query-capacity-reached, and the set is left as it was.',
      access: { kind: 'permission', permission: 'TagView' },
      params: sourceSetParams,
      responses: { 200: { description: 'The changed values.', schema: tagQuerySetResponseSchema } },
      problems: [400, 404, 413, 429, 503],
      handle: async ({ params, principal, context }): Promise<string> => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const set = registry.use(principal.user.id, params.sourceSet);
        // One poll of a set at a time: each reads and moves the set's cursors.
        const poll = () =>
          queue.run(set.id, async (): Promise<string> => {
            const bindings = set.bindings;
            const queryLimits = limits();
            const local = await matchLocalSources(deps.store, bindings, {
              maxMatches: queryLimits.maxMatchesPerRequest,
            });
            // Local changes first, remembered only once the whole answer is ready: a Logged read
            // that fails must not lose them.
            const changes = set.changes(local.bySource, maxValuesPerResponse);
            let truncated = changes.truncated;
            let budget = maxValuesPerResponse - changes.count;
            // A set holds Logged bindings only when history was configured at its creation.
            const history = deps.history;
            const hasLogged = history !== undefined && bindings.some((b) => b.store === 'Logged');
            const loggedAnswers = new Map<number, LoggedAnswer>();
            if (hasLogged && !truncated) {
              const at = now();
              const mark = await history.lastSeq();
              const tagIds = await resolveLogged(history, bindings);
              for (const [index, binding] of bindings.entries()) {
                if (binding.store !== 'Logged') continue;
                const previous = set.loggedCursor(index) ?? { mark, atMs: at };
                const answer = await readLoggedDelta(
                  history,
                  binding,
                  tagIds.get(binding.source) ?? [],
                  at,
                  previous,
                  mark,
                  budget,
                );
                loggedAnswers.set(index, answer);
                budget -= answer.samples.length;
                if (answer.over) {
                  truncated = true;
                  break;
                }
              }
            }
            // Nothing awaits from the admission to the commit, so the admission holds for it.
            registry.admit(set.ownerId, set, set.entries + changes.added, queryLimits);
            changes.commit();
            registry.account(set);
            for (const [index, answer] of loggedAnswers) set.setLoggedCursor(index, answer.cursor);
            return queryResponseJson(set.id, answered(bindings, changes.samples, loggedAnswers), {
              truncated,
            });
          });
        const json = await admission.run(set.ownerId, context.res, poll);
        context.type = 'application/json';
        return json;
      },
    }),
  ];
}

/** The values of each binding in binding order: its Logged answer, or its Local changes. */
function* answered(
  bindings: readonly TagQueryBinding[],
  local: readonly (readonly Sample[])[],
  logged: ReadonlyMap<number, LoggedAnswer>,
): Generator<BindingValues> {
  for (let binding = 0; binding < bindings.length; binding++) {
    yield { binding, samples: logged.get(binding)?.samples ?? local[binding] ?? [] };
  }
}

/** The history tags of each Logged binding's source, resolved once per source. */
async function resolveLogged(
  history: HistoryService,
  bindings: readonly TagQueryBinding[],
): Promise<Map<string, string[]>> {
  const bySource = new Map<string, string[]>();
  for (const binding of bindings) {
    if (binding.store !== 'Logged' || bySource.has(binding.source)) continue;
    bySource.set(binding.source, await history.resolve(binding.source));
  }
  return bySource;
}

function tooManyValues(total: number, exact: boolean, logged: boolean): ValidationError {
  const message =
    `The bindings match ${exact ? '' : 'at least '}${total.toLocaleString('en')} values; a ` +
    `response carries at most ${maxValuesPerResponse.toLocaleString('en')}. Narrow the ` +
    (logged ? 'sources, shorten the time ranges, or aggregate over longer windows.' : 'sources.');
  return new ValidationError(message, [{ path: 'bindings', message }]);
}

/**
 * The limit problem once a Logged binding overflowed: Local and Raw values are counted exactly
 * (the backend counts without reading); Aggregated windows are known only for the bindings
 * answered before the overflow, so with others the number is a lower bound.
 */
async function tooManyLoggedValues(
  history: HistoryService,
  bindings: readonly TagQueryBinding[],
  tagIds: Map<string, string[]>,
  nowMs: number,
  localValues: number,
  answered: ReadonlyMap<number, LoggedAnswer>,
  overflowed: { index: number; budget: number },
): Promise<ValidationError> {
  let total = localValues;
  let exact = true;
  for (const [index, binding] of bindings.entries()) {
    if (binding.store !== 'Logged') continue;
    if (binding.seriesMode !== 'Aggregated') {
      total += await countLogged(history, binding, tagIds.get(binding.source) ?? [], nowMs);
    } else if (answered.has(index)) {
      total += answered.get(index)?.samples.length ?? 0;
    } else {
      exact = false;
      // The overflowing binding alone went past its budget.
      if (index === overflowed.index) total += overflowed.budget + 1;
    }
  }
  return tooManyValues(total, exact, true);
}

/** A range whose stop lies before its start, checked at `nowMs` (relative ends slide with it). */
function rangeOrderErrors(bindings: TagQuerySetRequest['bindings'], nowMs: number): FieldError[] {
  const errors: FieldError[] = [];
  bindings.forEach((binding, index) => {
    if (binding.timeRangeStart === undefined || binding.timeRangeStop === undefined) return;
    const start = timePointOf(binding.timeRangeStart);
    const stop = timePointOf(binding.timeRangeStop);
    if (resolveTimePoint(stop, nowMs) < resolveTimePoint(start, nowMs)) {
      errors.push({
        path: `bindings[${index}].timeRangeStop`,
        message: 'Must not be before timeRangeStart.',
      });
    }
  });
  return errors;
}

// Only called on values the schema accepted.
function timePointOf(text: string): TimePoint {
  const result = parseTimePoint(text);
  if (!result.ok) throw new Error(`unreachable: ${text} passed validation`);
  return result.value;
}
