/**
 * The spec's route area "alerts": the alarms under `/api/v2/Alerts` — their states, the
 * operator actions (acknowledge, shelve, out of service), the journal (JSON or CSV), a stream of
 * transitions (SSE, under the caps of the tag streams), the definitions, and the ISA-18.2 /
 * EEMUA 191 performance figures.
 *
 * Permissions: AlertView reads (Viewers and up); AlertAcknowledge acknowledges and AlertShelve
 * shelves (Operators); AlertManage takes alarms out of service and edits definitions
 * (Administrators): both change what protects the plant. Every action is audited with the
 * account, and answered only once the journal has it on disk.
 */
import { z } from 'zod';
import type { ActionBy } from '../../alarms/alarm.js';
import { inArea } from '../../alarms/alarm-filter.js';
import type { JournalQuery } from '../../alarms/alarm-journal.js';
import {
  type AlarmDefinition,
  alarmConditions,
  alarmDefinitionSchema,
  alarmPriorities,
  reservedAlarmNames,
} from '../../alarms/alarm-schema.js';
import type { AlarmService, StreamedTransition } from '../../alarms/alarm-service.js';
import { alarmEvents, alarmStates } from '../../alarms/alarm-state.js';
import { alarmStatistics, maxSeriesWindows } from '../../alarms/alarm-statistics.js';
import type { AlarmView } from '../../alarms/alarm-view.js';
import { journalCsv } from '../../alarms/journal-csv.js';
import type { Principal } from '../../auth/account-service.js';
import type { Permission } from '../../auth/permissions.js';
import {
  type FieldError,
  NotFoundError,
  ProfileInvalidError,
  RequestError,
  TagdError,
  ValidationError,
} from '../../errors.js';
import type { ProfileInput } from '../../profile/schema.js';
import { parseTimePoint, resolveTimePoint } from '../../queries/time-range.js';
import { qualities } from '../../tags/sample.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import type { TagStreamHub } from '../tag-stream/tag-stream-hub.js';

const basePath = '/api/v2/Alerts';
const tag = 'Alerts';
/** Most journal entries one request returns. */
export const maxJournalEntries = 100_000;
/** Journal entries returned when `limit` is not given. */
export const defaultJournalEntries = 1000;
/** Most transitions the statistics read; a longer period is refused (413). */
export const maxStatisticsTransitions = 200_000;
/** Most transitions that wait for a slow stream client; beyond, the stream ends. */
export const maxStreamBacklog = 10_000;

const priorityRank: Record<string, number> = { Urgent: 0, High: 1, Medium: 2, Low: 3 };

const tagValue = z.union([z.number(), z.boolean(), z.string()]);

/** An alarm as the API shows it. */
export const alertSchema = z
  .object({
    name: z.string(),
    condition: z.enum(alarmConditions),
    source: z.string().optional(),
    priority: z.enum(alarmPriorities),
    severity: z.int().describe('1–1000.'),
    area: z.string().optional(),
    state: z.enum(alarmStates as [string, ...string[]]),
    active: z
      .boolean()
      .describe(
        'The condition holds (after its delays), or a latching alarm waits for acknowledgement.',
      ),
    acknowledged: z.boolean().describe('Nothing waits for an operator’s acknowledgement.'),
    activeSince: z.string().optional().describe('ISO 8601 UTC.'),
    changedAt: z.string().optional().describe('When the state last changed, ISO 8601 UTC.'),
    value: tagValue.optional().describe('The reading of its last transition.'),
    limit: tagValue.optional(),
    unit: z.string().optional(),
    message: z.string(),
    shelve: z
      .object({
        kind: z.enum(['Timed', 'OneShot']),
        since: z.string(),
        until: z.string().describe('When the shelve ends at the latest.'),
        account: z.string().optional(),
        reason: z.string().optional(),
      })
      .optional(),
    suppressed: z.boolean(),
    outOfService: z.boolean(),
    quality: z
      .enum(qualities as [string, ...string[]])
      .describe(
        '`Good`: evaluated on Good data. `Stale`: the condition cannot be evaluated now (see `problem`); `active` is what it last decided. `Unavailable`: never evaluated.',
      ),
    problem: z.string().optional(),
  })
  .meta({ id: 'Alert' });

/** One transition of the journal and the stream. */
export const alertTransitionSchema = z
  .object({
    seq: z
      .int()
      .optional()
      .describe('Position in the journal. Absent on the stream while the journal refuses writes.'),
    time: z.int().describe('Epoch milliseconds.'),
    name: z.string(),
    event: z.enum(alarmEvents as [string, ...string[]]),
    from: z.enum(alarmStates as [string, ...string[]]),
    to: z.enum(alarmStates as [string, ...string[]]),
    active: z.boolean(),
    acknowledged: z.boolean(),
    value: tagValue.optional(),
    limit: tagValue.optional(),
    account: z.string().optional(),
    comment: z.string().optional(),
    priority: z.enum(alarmPriorities),
    severity: z.int(),
    area: z.string().optional(),
    message: z.string(),
  })
  .meta({ id: 'AlertTransition' });

const nameParams = z.object({ name: z.string().min(1).max(128).describe('The alarm name.') });

const comment = z.string().max(1000).optional().describe('Why; kept in the journal.');
const actionBody = z.strictObject({ comment }).meta({ id: 'AlertActionRequest' });

const shelveBody = z
  .strictObject({
    kind: z
      .enum(['Timed', 'OneShot'])
      .default('Timed')
      .describe('`Timed` (default): for durationMinutes. `OneShot`: until the alarm next clears.'),
    durationMinutes: z
      .number()
      .positive()
      .optional()
      .describe('Timed only, required there: at most the alarm’s maxShelveMinutes.'),
    reason: z.string().max(1000).optional().describe('Why it is shelved; kept in the journal.'),
  })
  .superRefine((body, context) => {
    if (body.kind === 'Timed' && body.durationMinutes === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['durationMinutes'],
        message: 'Required for a Timed shelve.',
      });
    }
    if (body.kind === 'OneShot' && body.durationMinutes !== undefined) {
      context.addIssue({
        code: 'custom',
        path: ['durationMinutes'],
        message: 'A OneShot shelve ends when the alarm clears (at most after maxShelveMinutes).',
      });
    }
  })
  .meta({ id: 'AlertShelveRequest' });

const bulkBody = z
  .strictObject({
    names: z
      .array(z.string().min(1).max(128))
      .min(1)
      .max(1000)
      .describe('The alarms to acknowledge.'),
    comment,
  })
  .meta({ id: 'AlertBulkAcknowledgeRequest' });

const bulkResult = z
  .object({
    results: z.array(
      z.object({
        name: z.string(),
        status: z.int().describe('200: acknowledged; else the status a single request would get.'),
        code: z.string().optional().describe('The error code when not acknowledged.'),
        detail: z.string().optional(),
        alert: alertSchema.optional(),
      }),
    ),
  })
  .meta({ id: 'AlertBulkAcknowledgeResult' });

/** A comma-separated list: its items trimmed, empty ones dropped. */
const commaSeparated = z.string().transform((text) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== ''),
);

/** A comma-separated list of one of `values`. */
function listOf<T extends string>(values: readonly T[], what: string) {
  return commaSeparated
    .pipe(z.array(z.enum(values as [T, ...T[]])))
    .optional()
    .describe(`Comma-separated ${what}: ${values.join(', ')}.`);
}

const names = commaSeparated.optional();

const timePoint = (fallback: string, what: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, context) => {
      const parsed = parseTimePoint(text);
      if (!parsed.ok) {
        context.addIssue({ code: 'custom', message: parsed.message });
        return z.NEVER;
      }
      return parsed.value;
    })
    .describe(
      `${what}: \`now\`, \`now-<n><s|m|h|d>\` or an ISO 8601 timestamp. Default \`${fallback}\`.`,
    );

const listQuery = z.object({
  all: z
    .enum(['true', 'false'])
    .optional()
    .describe('`true`: Normal alarms too. Default: only those not Normal.'),
  state: listOf(alarmStates, 'states'),
  priority: listOf(alarmPriorities, 'priorities'),
  area: names.describe('Comma-separated areas; an area takes the areas below it.'),
});

const journalQuery = z.object({
  from: timePoint('now-24h', 'Start of the period'),
  to: timePoint('now', 'End of the period'),
  name: names.describe('Comma-separated alarm names.'),
  area: names.describe('Comma-separated areas; an area takes the areas below it.'),
  priority: listOf(alarmPriorities, 'priorities'),
  state: listOf(alarmStates, 'states the transitions went into'),
  event: listOf(alarmEvents, 'events'),
  afterSeq: z
    .string()
    .regex(/^\d{1,15}$/, 'must be a whole number')
    .transform(Number)
    .optional()
    .describe('Pages on: the `seq` of the last entry of the previous page.'),
  order: z.enum(['asc', 'desc']).default('desc').describe('`desc` (default): newest first.'),
  limit: z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.int().min(1).max(maxJournalEntries))
    .optional()
    .describe(`Most entries, 1 to ${maxJournalEntries}. Default ${defaultJournalEntries}.`),
  format: z.enum(['json', 'csv']).default('json').describe('`csv`: a CSV file (RFC 4180).'),
});

const statisticsQuery = z.object({
  from: timePoint('now-24h', 'Start of the period'),
  to: timePoint('now', 'End of the period'),
});

const statisticsSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    activations: z
      .int()
      .describe('Activations shown to operators (not shelved, suppressed or out of service).'),
    byPriority: z.record(z.enum(alarmPriorities), z.int()),
    perTenMinutes: z.object({
      average: z.number(),
      peak: z.int(),
      peakWindowStart: z.string().optional(),
    }),
    perWindow: z
      .array(z.int())
      .optional()
      .describe(
        `Activations in each 10-minute window, from the period's start; absent when the period has more than ${maxSeriesWindows} windows.`,
      ),
    windows: z.int().describe('10-minute windows of the period, from its start.'),
    floodWindows: z.int().describe('Windows with more than 10 activations.'),
    floodShare: z.number().describe('Share of the windows in flood, 0–1.'),
    mostFrequent: z.array(z.object({ name: z.string(), activations: z.int() })),
    chattering: z.array(z.object({ name: z.string(), mostIn60s: z.int() })),
    stale: z.array(z.object({ name: z.string(), activeSince: z.string() })),
    shelved: z.object({ actions: z.int(), now: z.int() }),
  })
  .meta({ id: 'AlertStatistics' });

const definitionReplacement = alarmDefinitionSchema;

/** The routes of the alerts area. */
export function alertRoutes(deps: ApiDeps, streams: TagStreamHub): RouteDefinition[] {
  // Resolved per request: the route list is also built without these services (OpenAPI).
  const alarms = (): AlarmService => {
    if (!deps.alarms) throw new Error('The alerts routes need the alarm service.');
    return deps.alarms;
  };
  const now = () => (deps.now ?? Date.now)();
  const found = { 200: { description: 'The alarm.', schema: alertSchema } };
  const view = (name: string): AlarmView => {
    const alarm = alarms().get(name);
    if (alarm === undefined) throw notFound(name);
    return alarm;
  };
  /**
   * An alarm action: `POST {basePath}/{name}/{action}` with an optional comment; answers the
   * alarm after the action and audits it as `event`.
   */
  const actionRoute = (action: {
    path: string;
    operationId: string;
    summary: string;
    description: string;
    permission: Permission;
    event: string;
    run: (service: AlarmService, name: string, by: ActionBy) => AlarmView;
  }) =>
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/${action.path}`,
      operationId: action.operationId,
      tag,
      summary: action.summary,
      description: action.description,
      access: { kind: 'permission', permission: action.permission },
      params: nameParams,
      body: actionBody,
      responses: found,
      problems: [404, 409, 503],
      handle: ({ params, body, principal }) => {
        const by = byOf(principal, body.comment);
        const result = action.run(alarms(), params.name, by);
        auditAction(action.event, params.name, by, result.state);
        return result;
      },
    });
  const auditAction = (event: string, name: string, by: ActionBy, state: string, extra = {}) => {
    deps.audit.info(
      {
        event,
        alarm: name,
        username: by.account,
        ...(by.comment !== undefined ? { comment: by.comment } : {}),
        state,
        ...extra,
      },
      `${event}: ${name}`,
    );
  };
  const claimsName = (params: Record<string, string>) => !isReserved(params.name ?? '');

  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listAlerts',
      tag,
      summary: 'List alarms that need attention',
      description:
        'The alarms not Normal (active, unacknowledged, shelved, suppressed, out of service), or every alarm with `all=true`, filtered by state, priority and area; sorted by priority (Urgent first), then by the time of their last change (newest first).',
      access: { kind: 'permission', permission: 'AlertView' },
      query: listQuery,
      responses: { 200: { description: 'The alarms.', schema: z.array(alertSchema) } },
      problems: [400],
      handle: ({ query }) => {
        const areas = query.area ?? [];
        return alarms()
          .list()
          .filter((alarm) => query.all === 'true' || alarm.state !== 'Normal')
          .filter(
            (alarm) => query.state === undefined || query.state.includes(alarm.state as never),
          )
          .filter(
            (alarm) => query.priority === undefined || query.priority.includes(alarm.priority),
          )
          .filter((alarm) => areas.length === 0 || areas.some((area) => inArea(alarm.area, area)))
          .sort(
            (a, b) =>
              (priorityRank[a.priority] ?? 9) - (priorityRank[b.priority] ?? 9) ||
              (b.changedAt ?? '').localeCompare(a.changedAt ?? '') ||
              a.name.localeCompare(b.name),
          );
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/Journal`,
      operationId: 'getAlertJournal',
      tag,
      summary: 'Read the alarm journal',
      description: `Every transition of the alarms in the period (default the last 24 h), filtered, newest first (\`order=asc\`: oldest first). A page holds at most \`limit\` entries; pass the last entry's \`seq\` as \`afterSeq\` for the next. \`format=csv\` answers a CSV file (RFC 4180; text a spreadsheet would run as a formula is prefixed with an apostrophe).`,
      access: { kind: 'permission', permission: 'AlertView' },
      query: journalQuery,
      responses: {
        200: {
          description: 'The entries (`text/csv` with `format=csv`).',
          schema: z
            .object({ entries: z.array(alertTransitionSchema) })
            .meta({ id: 'AlertJournalPage' }),
        },
      },
      problems: [400],
      handle: ({ context, query }) => {
        const at = now();
        const request: JournalQuery = {
          fromMs: resolveTimePoint(query.from, at),
          toMs: resolveTimePoint(query.to, at),
          order: query.order,
          limit: query.limit ?? defaultJournalEntries,
          ...(query.name ? { names: query.name } : {}),
          ...(query.area ? { areas: query.area } : {}),
          ...(query.priority ? { priorities: query.priority } : {}),
          ...(query.state ? { states: query.state as JournalQuery['states'] } : {}),
          ...(query.event ? { events: query.event as JournalQuery['events'] } : {}),
          ...(query.afterSeq !== undefined ? { afterSeq: query.afterSeq } : {}),
        };
        const entries = alarms().journal.query(request);
        if (query.format === 'csv') {
          context.type = 'text/csv; charset=utf-8';
          context.set('Content-Disposition', 'attachment; filename="alarm-journal.csv"');
          return journalCsv(entries);
        }
        return { entries };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/Stream`,
      operationId: 'streamAlerts',
      tag,
      summary: 'Follow alarm transitions as Server-Sent Events',
      description: [
        'A `text/event-stream` that stays open. The first event is `data: []` (the stream is open: read `GET /api/v2/Alerts` after it to know the states); then each batch of transitions, once in the journal, is one event: a JSON array of `AlertTransition`.',
        `Every transition is sent: none is coalesced. A client reading so slowly that more than ${maxStreamBacklog} transitions wait is disconnected; it reads what it missed from the journal (\`afterSeq\`). Heartbeats, the session checks and the caps are those of \`GET /api/v2/Tags/Stream\`, whose streams count against the same limits (429 \`stream-capacity-reached\`).`,
      ].join('\n\n'),
      access: { kind: 'permission', permission: 'AlertView' },
      responses: {
        200: {
          description:
            'Events until the stream ends: `data: [<AlertTransition>, …]` lines, and `: heartbeat` comments.',
          mediaType: 'text/event-stream',
        },
      },
      problems: [429],
      handle: ({ context, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        const service = alarms();
        let next = 0;
        streams.openEventStream<StreamedTransition>(
          context,
          principal,
          { message: 'alarm stream ended' },
          {
            initial: () => [],
            subscribe: (listener) => service.subscribe(listener),
            // Every transition its own key: none replaces another while the client lags.
            coalesceKey: () => next++,
            maxWaiting: maxStreamBacklog,
          },
        );
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/Statistics`,
      operationId: 'getAlertStatistics',
      tag,
      summary: 'Alarm system performance (ISA-18.2, EEMUA 191)',
      description: `Over the period (default the last 24 h): activations shown to operators per 10 minutes (average, and the busiest window), the share of 10-minute windows in flood (more than 10), the 10 most frequent alarms, chattering alarms (3 or more activations within 60 s), stale alarms (active for more than 24 h now), and shelving. A period holding more than ${maxStatisticsTransitions} transitions is refused (413 \`query-too-large\`): ask for a shorter one.`,
      access: { kind: 'permission', permission: 'AlertView' },
      query: statisticsQuery,
      responses: { 200: { description: 'The figures.', schema: statisticsSchema } },
      problems: [400, 413],
      handle: ({ query }) => {
        const at = now();
        const fromMs = resolveTimePoint(query.from, at);
        const toMs = resolveTimePoint(query.to, at);
        if (toMs < fromMs) {
          throw new ValidationError('The request query is invalid.', [
            { path: 'to', message: 'Must not be before from.' },
          ]);
        }
        const service = alarms();
        const period = { fromMs, toMs, events: ['Activated', 'Shelved'] as const };
        // Counted before any row is read: a Viewer's long period must not load the journal.
        if (service.journal.count(period) > maxStatisticsTransitions) {
          throw new RequestError(
            'query-too-large',
            413,
            `The period holds more than ${maxStatisticsTransitions} activations and shelves: ask for a shorter one.`,
          );
        }
        const transitions = service.journal.query({
          ...period,
          order: 'asc',
          limit: maxStatisticsTransitions,
        });
        return alarmStatistics(transitions, service.list(), fromMs, toMs, at);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/Acknowledge`,
      operationId: 'acknowledgeAlerts',
      tag,
      summary: 'Acknowledge several alarms',
      description:
        'Acknowledges each named alarm as `POST /api/v2/Alerts/{name}/Acknowledge` would, with one comment, in one journal write; answers 200 with one result per name, in order: `status` 200 and the alarm when acknowledged, else the status and code a single request would have got (404 `not-found`, 409 `alarm-state-conflict`; 503 `alarm-journal-unavailable` for each of them when the journal refused the write: then none was acknowledged).',
      access: { kind: 'permission', permission: 'AlertAcknowledge' },
      body: bulkBody,
      responses: { 200: { description: 'One result per name.', schema: bulkResult } },
      problems: [400],
      handle: ({ body, principal }) => {
        const by = byOf(principal, body.comment);
        // One journal write (one fsync) for all of them.
        const outcomes = alarms().acknowledgeMany(body.names, by);
        return {
          results: body.names.map((name, index) => {
            const outcome = outcomes[index];
            if (outcome instanceof TagdError) {
              return { name, status: outcome.status, code: outcome.code, detail: outcome.message };
            }
            const alert = outcome as AlarmView;
            auditAction('alarm-acknowledged', name, by, alert.state);
            return { name, status: 200, alert };
          }),
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/Definitions`,
      operationId: 'listAlertDefinitions',
      tag,
      summary: 'List alarm definitions',
      description: 'Every alarm definition of the profile (disabled ones too), in profile order.',
      access: { kind: 'permission', permission: 'AlertView' },
      responses: {
        200: { description: 'The definitions.', schema: z.array(alarmDefinitionSchema) },
      },
      problems: [],
      handle: () => alarms().definitions(),
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/Definitions/{name}`,
      operationId: 'getAlertDefinition',
      tag,
      summary: 'Read an alarm definition',
      access: { kind: 'permission', permission: 'AlertView' },
      params: nameParams,
      responses: { 200: { description: 'The definition.', schema: alarmDefinitionSchema } },
      problems: [404],
      handle: ({ params }) => definitionOf(alarms(), params.name),
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/Definitions/{name}`,
      operationId: 'putAlertDefinition',
      tag,
      summary: 'Create or replace an alarm definition',
      description:
        'Saves the definition to the profile (201 when new, 200 when replaced) and puts it in force at once. The body’s `name` must be the path’s. A replaced alarm keeps its state (an unacknowledged alarm stays so); a disabled one loses its state tags and saved state (its journal stays).',
      access: { kind: 'permission', permission: 'AlertManage' },
      params: nameParams,
      body: definitionReplacement,
      responses: {
        200: { description: 'Replaced.', schema: alarmDefinitionSchema },
        201: { description: 'Created.', schema: alarmDefinitionSchema },
      },
      problems: [400],
      handle: async ({ context, params, body, principal }) => {
        if (body.name !== params.name) {
          throw new ValidationError('The request body is invalid.', [
            { path: 'name', message: `Must be '${params.name}', the path's.` },
          ]);
        }
        const service = alarms();
        let created = false;
        await saved(
          deps,
          service,
          (draft) => {
            const list = alarmsOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            created = index < 0;
            if (created) list.push(body);
            else list[index] = body;
          },
          {
            event: 'alarm-definition-saved',
            alarm: params.name,
            username: principal?.user.username,
          },
        );
        if (created) context.status = 201;
        return definitionOf(service, params.name);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/Definitions/{name}`,
      operationId: 'deleteAlertDefinition',
      tag,
      summary: 'Delete an alarm definition',
      description:
        'Removes the definition from the profile; the alarm stops at once, its state tags and saved state go, its journal stays.',
      access: { kind: 'permission', permission: 'AlertManage' },
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        const service = alarms();
        definitionOf(service, params.name);
        await saved(
          deps,
          service,
          (draft) => {
            const list = alarmsOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFoundDefinition(params.name);
            list.splice(index, 1);
          },
          {
            event: 'alarm-definition-deleted',
            alarm: params.name,
            username: principal?.user.username,
          },
        );
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}`,
      operationId: 'getAlert',
      tag,
      summary: 'Read an alarm',
      access: { kind: 'permission', permission: 'AlertView' },
      params: nameParams,
      claims: claimsName,
      responses: found,
      problems: [404],
      handle: ({ params }) => view(params.name),
    }),
    actionRoute({
      path: 'Acknowledge',
      operationId: 'acknowledgeAlert',
      summary: 'Acknowledge an alarm',
      description:
        'An active alarm turns Acknowledged; one whose condition is gone (returned to normal, or latched) turns Normal. Nothing to acknowledge: 409 `alarm-state-conflict`. Answered once the journal has it on disk (else 503 `alarm-journal-unavailable`, and nothing changed). The body may be `{}`.',
      permission: 'AlertAcknowledge',
      event: 'alarm-acknowledged',
      run: (service, name, by) => service.acknowledge(name, by),
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Shelve`,
      operationId: 'shelveAlert',
      tag,
      summary: 'Shelve an alarm',
      description:
        'Hides the alarm from the operators for `durationMinutes` (`Timed`, at most the alarm’s maxShelveMinutes), or until it next clears (`OneShot`, at most maxShelveMinutes); it ends by itself, journaled. Shelving a shelved alarm replaces its shelve. The alarm keeps following its condition underneath.',
      access: { kind: 'permission', permission: 'AlertShelve' },
      params: nameParams,
      body: shelveBody,
      responses: found,
      problems: [404, 503],
      handle: ({ params, body, principal }) => {
        const by = byOf(principal, body.reason);
        const result = alarms().shelve(params.name, {
          kind: body.kind,
          ...(body.durationMinutes !== undefined
            ? { durationMs: body.durationMinutes * 60_000 }
            : {}),
          ...by,
        });
        auditAction('alarm-shelved', params.name, by, result.state, {
          kind: body.kind,
          ...(result.shelve ? { until: result.shelve.until } : {}),
        });
        return result;
      },
    }),
    actionRoute({
      path: 'Unshelve',
      operationId: 'unshelveAlert',
      summary: 'Unshelve an alarm',
      description: 'Not shelved: 409 `alarm-state-conflict`.',
      permission: 'AlertShelve',
      event: 'alarm-unshelved',
      run: (service, name, by) => service.unshelve(name, by),
    }),
    actionRoute({
      path: 'OutOfService',
      operationId: 'takeAlertOutOfService',
      summary: 'Take an alarm out of service',
      description:
        'For maintenance: the alarm shows OutOfService until put back in service (no time limit). Already out of service: 409 `alarm-state-conflict`.',
      permission: 'AlertManage',
      event: 'alarm-out-of-service',
      run: (service, name, by) => service.setOutOfService(name, true, by),
    }),
    actionRoute({
      path: 'InService',
      operationId: 'putAlertInService',
      summary: 'Put an alarm back in service',
      description:
        'The alarm shows its condition again: active ones as they are, one whose condition is gone as Normal. Already in service: 409 `alarm-state-conflict`.',
      permission: 'AlertManage',
      event: 'alarm-in-service',
      run: (service, name, by) => service.setOutOfService(name, false, by),
    }),
  ];
}

function byOf(principal: Principal | undefined, comment: string | undefined): ActionBy {
  return {
    ...(principal ? { account: principal.user.username } : {}),
    ...(comment !== undefined && comment !== '' ? { comment } : {}),
  };
}

function isReserved(name: string): boolean {
  return reservedAlarmNames.some((reserved) => reserved.toLowerCase() === name.toLowerCase());
}

function notFound(name: string): NotFoundError {
  return new NotFoundError(
    `No alarm named '${name.slice(0, 300)}' is running (unknown or disabled).`,
  );
}

function notFoundDefinition(name: string): NotFoundError {
  return new NotFoundError(`No alarm definition named '${name.slice(0, 300)}' in the profile.`);
}

function definitionOf(service: AlarmService, name: string): AlarmDefinition {
  const definition = service.definitions().find((existing) => existing.name === name);
  if (definition === undefined) throw notFoundDefinition(name);
  return definition;
}

function alarmsOf(draft: ProfileInput): NonNullable<ProfileInput['alarms']> {
  draft.alarms ??= [];
  return draft.alarms;
}

/**
 * Saves a profile edit and puts the alarm definitions in force, in the profile's queue (so a
 * reload never interleaves); whole-profile errors about the edited alarm are answered with
 * paths in the request body, as a 400.
 */
async function saved(
  deps: ApiDeps,
  service: AlarmService,
  edit: (draft: ProfileInput) => void,
  what: Record<string, unknown>,
): Promise<void> {
  const profile = deps.profile;
  if (!profile) throw new Error('The alarm definition routes need the profile service.');
  try {
    await profile.exclusive(async (session) => {
      const saved = await session.update(edit, what);
      service.apply(saved.alarms);
    });
  } catch (error) {
    if (!(error instanceof ProfileInvalidError)) throw error;
    const errors: FieldError[] = error.errors.map((found) => ({
      path: found.path.replace(/^alarms\[\d+\]\.?/, '') || '(root)',
      message: found.message,
    }));
    throw new ValidationError('The request body is invalid.', errors);
  }
}
