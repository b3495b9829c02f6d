/**
 * The one tool registry of tagd's assistants: every tool defined once (tools/*.ts), served to
 * the MCP server (`/api/v2/Mcp`) and to the chat. Each call here:
 *
 * - runs as the caller's account: the tool needs its permission (a tool the account lacks is
 *   neither listed nor callable), the token must still be valid (revoked: nothing more runs),
 *   and the account has at most {@link maxConcurrentCallsPerAccount} calls in flight;
 * - validates its input with the tool's zod schema (every wrong field named);
 * - answers a bounded JSON value (tool-output.ts: 64 KiB, strings 4,096 characters; each tool
 *   bounds its rows and says so);
 * - is audited: the account, the tool, its arguments (bounded), `via` (`chat` or `mcp`), the
 *   conversation or session, and the outcome; a line per call, except that repeated answered
 *   calls of a read-only tool are summarized once a second (tool-call-audit.ts).
 *
 * The tools never write: `proposeWrite` and `proposeAcknowledge` record proposals that a person
 * confirms (proposal-service.ts).
 */
import { z } from 'zod';
import type { Principal } from '../auth/account-service.js';
import type { Clock } from '../clock.js';
import { type FieldError, TagdError, TooManyRequestsError, ValidationError } from '../errors.js';
import { toFieldErrors } from '../profile/validate-profile.js';
import type { AssistantDeps } from './assistant-deps.js';
import type { AssistantTool, ToolCaller } from './assistant-tool.js';
import { ToolCallAudit } from './tool-call-audit.js';
import { boundOutput } from './tool-output.js';
import { browseTagsTool } from './tools/browse-tags.js';
import { explainTagTool } from './tools/explain-tag.js';
import { listAlarmsTool } from './tools/list-alarms.js';
import { listDriversTool } from './tools/list-drivers.js';
import { listPublishersTool } from './tools/list-publishers.js';
import { proposeAcknowledgeTool } from './tools/propose-acknowledge.js';
import { proposeWriteTool } from './tools/propose-write.js';
import { queryHistoryTool } from './tools/query-history.js';
import { readAlarmJournalTool } from './tools/read-alarm-journal.js';
import { readDbcSignalsTool } from './tools/read-dbc-signals.js';
import { readSamplesTool } from './tools/read-samples.js';

/** Tool calls one account may have in flight at once (429 beyond). */
export const maxConcurrentCallsPerAccount = 4;

/** A tool's answer. */
export type ToolOutcome =
  | {
      ok: true;
      /** The bounded answer. */
      value: unknown;
      /** The same as JSON (what MCP and the chat pass to the model). */
      json: string;
      /** True when rows or characters were left out to fit the bounds. */
      truncated: boolean;
    }
  | {
      ok: false;
      /** Why the call was refused or failed, as the API's problem documents say it. */
      error: { code: string; status: number; message: string; errors?: readonly FieldError[] };
    };

/** Every tool, in the order they are listed. */
export function assistantTools(deps: AssistantDeps): AssistantTool[] {
  return [
    browseTagsTool(deps),
    readSamplesTool(deps),
    queryHistoryTool(deps),
    explainTagTool(deps),
    listDriversTool(deps),
    listAlarmsTool(deps),
    readAlarmJournalTool(deps),
    readDbcSignalsTool(deps),
    listPublishersTool(deps),
    proposeWriteTool(deps),
    proposeAcknowledgeTool(deps),
  ];
}

/** Tools that only make sense when alarms exist (the issue: "when alarms exist"). */
const alarmTools = new Set(['listAlarms', 'readAlarmJournal', 'proposeAcknowledge']);
/** Tools that record proposals. */
const proposalTools = new Set(['proposeWrite', 'proposeAcknowledge']);

/** The registry the MCP server and the chat serve. */
export class AssistantToolRegistry {
  private readonly tools: ReadonlyMap<string, AssistantTool>;
  private readonly schemas = new Map<string, Record<string, unknown>>();
  private readonly inFlight = new Map<string, number>();
  private readonly callAudit: ToolCallAudit;

  /**
   * @param options.tools - default {@link assistantTools} of the deps.
   * @param options.clock - the audit's summary windows (tool-call-audit.ts); default the deps'
   *   clock, else the system clock.
   */
  constructor(
    private readonly deps: AssistantDeps,
    options: { tools?: readonly AssistantTool[]; clock?: Clock } = {},
  ) {
    const tools = options.tools ?? assistantTools(deps);
    this.tools = new Map(tools.map((tool) => [tool.name, tool]));
    const clock = options.clock ?? deps.clock;
    this.callAudit = new ToolCallAudit(deps.audit, clock ? { clock } : {});
  }

  /** Writes the audit's pending summary lines (the daemon's stop, before it ends). */
  flushAudit(): void {
    this.callAudit.flush();
  }

  /** Every tool, whoever asks. */
  all(): AssistantTool[] {
    return [...this.tools.values()];
  }

  /**
   * The tools `principal` may call now: those whose permission it holds, and whose services
   * exist (the alarm tools while alarms are defined, the proposal tools with a proposal service).
   */
  toolsFor(principal: Principal): AssistantTool[] {
    return this.all().filter(
      (tool) => principal.permissions.has(tool.permission) && this.available(tool),
    );
  }

  /** A tool's input as JSON Schema (draft 2020-12), computed once. */
  inputJsonSchema(tool: AssistantTool): Record<string, unknown> {
    let schema = this.schemas.get(tool.name);
    if (schema === undefined) {
      schema = z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >;
      delete schema.$schema;
      this.schemas.set(tool.name, schema);
    }
    return schema;
  }

  /**
   * Calls a tool as `caller`. Never throws: a refusal (unknown tool, permission, revoked token,
   * invalid input, what the tool's service refused) or a failure is an outcome with `ok: false`,
   * so one bad call never ends a conversation or a session.
   */
  async call(name: string, args: unknown, caller: ToolCaller): Promise<ToolOutcome> {
    const account = caller.principal.user.username;
    const tool = this.tools.get(name);
    let outcome: ToolOutcome;
    const userId = caller.principal.user.id;
    let counted = false;
    try {
      if (tool === undefined || !this.available(tool)) {
        throw new TagdError('not-found', 404, `No tool named '${String(name).slice(0, 64)}'.`);
      }
      if (!caller.principal.permissions.has(tool.permission)) {
        throw new TagdError(
          'forbidden',
          403,
          `The tool ${tool.name} needs the ${tool.permission} permission, which account ${account} does not have.`,
        );
      }
      if (!this.deps.accounts.stillValid(caller.principal)) {
        throw new TagdError('unauthorized', 401, 'The token has been revoked or has expired.');
      }
      const running = this.inFlight.get(userId) ?? 0;
      if (running >= maxConcurrentCallsPerAccount) {
        throw new TooManyRequestsError(
          `Account ${account} has ${maxConcurrentCallsPerAccount} tool calls running; wait for them.`,
          1,
        );
      }
      this.inFlight.set(userId, running + 1);
      counted = true;
      const parsed = tool.input.safeParse(args ?? {});
      if (!parsed.success) {
        throw new ValidationError(
          `The input of ${tool.name} is invalid.`,
          parsed.error.issues.flatMap(toFieldErrors),
        );
      }
      const output = tool.handle(parsed.data, caller);
      const bounded = boundOutput(output instanceof Promise ? await output : output);
      outcome = {
        ok: true,
        json: bounded.json,
        value: bounded.value,
        truncated: bounded.truncated,
      };
    } catch (error) {
      outcome = { ok: false, error: this.describe(error, name) };
    } finally {
      if (counted) {
        const left = (this.inFlight.get(userId) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(userId);
        else this.inFlight.set(userId, left);
      }
    }
    this.callAudit.record({
      tool: String(name),
      readOnly: tool?.readOnly ?? false,
      account,
      via: caller.via,
      conversationId: caller.conversationId,
      args,
      outcome: outcome.ok ? 'ok' : outcome.error.code,
      truncated: outcome.ok && outcome.truncated,
    });
    return outcome;
  }

  private available(tool: AssistantTool): boolean {
    if (alarmTools.has(tool.name) && (this.deps.alarms?.definitions().length ?? 0) === 0) {
      return false;
    }
    if (proposalTools.has(tool.name) && this.deps.proposals === undefined) return false;
    return true;
  }

  private describe(error: unknown, name: string): Extract<ToolOutcome, { ok: false }>['error'] {
    if (error instanceof TagdError) {
      return {
        code: error.code,
        status: error.status,
        message: error.message,
        ...(error instanceof ValidationError ? { errors: error.errors } : {}),
      };
    }
    // A bug, not a refusal: logged with its stack; the caller (and the model) sees none.
    this.deps.logger.error({ err: error, tool: name }, 'an assistant tool failed');
    return {
      code: 'internal',
      status: 500,
      message: 'The tool failed; the error has been logged.',
    };
  }
}
