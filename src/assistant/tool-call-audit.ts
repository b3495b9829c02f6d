/**
 * The audit lines of assistant tool calls (`event: assistant-tool`).
 *
 * Every call is audited, but not every call gets a line of its own: a client that reads in a
 * loop (an agent polling a tag, a dashboard built on MCP) would write thousands of lines a
 * second, and journald drops a service's lines beyond its rate limit (10,000 per 30 s by
 * default): a Viewer's token could then push the lines that matter (writes, refusals, sign-ins)
 * out of the trail. So:
 *
 * - a refused or failed call, and every call of a tool that is not read-only (the proposals),
 *   is written at once, one line each;
 * - the first answered call of a read-only tool by an account, via a channel (and conversation
 *   or session), is written at once too; further answered calls of the same within
 *   {@link summaryWindowMs} are counted and written as one summary line at the end of the
 *   window (the calls, the first and last call time, each distinct arguments text with its
 *   count), and the window starts again while calls go on. A window that ends without calls
 *   closes: the next call is written at once. An account that calls now and then sees exactly
 *   one line per call, as before.
 *
 * {@link ToolCallAudit.flush} writes what is pending (the daemon's stop).
 */
import type { Logger } from 'pino';
import { type Clock, systemClock, type TimerHandle } from '../clock.js';
import type { ToolVia } from './assistant-tool.js';

/** How long answered read-only calls are counted into one summary line: 1 s. */
export const summaryWindowMs = 1000;
/** Distinct arguments texts a summary line lists; calls with others are only counted: 16. */
export const maxSummaryArguments = 16;
/** Summaries open at once; beyond, calls are written one line each: 1,000. */
const maxOpenSummaries = 1000;
/** Longest arguments text an audit line keeps, characters: 1,024. */
export const maxAuditedArguments = 1024;
/** Longest arguments text whose arguments a summary keeps to compare the next call's: 256. */
const maxComparedArguments = 256;
/** Deepest nesting {@link sameJson} compares; deeper arguments are serialized instead. */
const maxComparedDepth = 4;

/** One tool call, as the audit records it. */
export interface AuditedToolCall {
  /** The tool's name as called (the caller chose it: bounded to 64 characters here). */
  tool: string;
  /** True for a tool that only reads (a registered tool's `readOnly`); false when unknown. */
  readOnly: boolean;
  account: string;
  via: ToolVia;
  /** The chat conversation or MCP session, when known. */
  conversationId: string | undefined;
  /**
   * The call's input as the caller sent it (parsed JSON, not changed afterwards: a summary
   * compares the next call's input with it).
   */
  args: unknown;
  /** `ok`, or the error code of the refusal or failure. */
  outcome: string;
  /** True when the answer was cut to fit the bounds. */
  truncated: boolean;
}

/** Whose calls a summary counts: the fields its line names (never the arguments object). */
type SummaryIdentity = Pick<AuditedToolCall, 'tool' | 'account' | 'via' | 'conversationId'>;

interface OpenSummary {
  key: string;
  /** Kept without the first call's arguments: a summary may stay open for as long as calls go on. */
  identity: SummaryIdentity;
  calls: number;
  firstAt: number;
  lastAt: number;
  /** Calls per arguments text, at most {@link maxSummaryArguments} texts. */
  argumentsCounts: Map<string, number>;
  /** The last counted call's arguments and their text, when short (see argumentsTextOf). */
  lastArguments: { args: unknown; text: string } | undefined;
  otherArguments: number;
  truncated: boolean;
  timer: TimerHandle | undefined;
}

/** Writes the audit lines of tool calls; see the file comment for when a line is written. */
export class ToolCallAudit {
  private readonly summaries = new Map<string, OpenSummary>();
  /** The summary {@link ToolCallAudit.openSummaryOf} found last, while it is open. */
  private lastFound: OpenSummary | undefined;
  private readonly clock: Clock;
  private readonly windowMs: number;

  /**
   * @param audit - the audit log.
   * @param options.clock - timers and time of the summaries; default the system clock.
   * @param options.windowMs - the summary window, ms; default {@link summaryWindowMs}.
   */
  constructor(
    private readonly audit: Logger,
    options: { clock?: Clock; windowMs?: number } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.windowMs = options.windowMs ?? summaryWindowMs;
  }

  /** Audits one call: a line now, or a count in its open summary. */
  record(call: AuditedToolCall): void {
    if (!call.readOnly || call.outcome !== 'ok' || !this.audit.isLevelEnabled('info')) {
      this.writeCall(call);
      return;
    }
    const open = this.openSummaryOf(call);
    if (open === undefined) {
      this.writeCall(call);
      if (this.summaries.size < maxOpenSummaries) this.open(call);
      return;
    }
    const now = this.clock.now();
    if (open.calls === 0) open.firstAt = now;
    open.calls++;
    open.lastAt = now;
    if (call.truncated) open.truncated = true;
    const text = this.argumentsTextOf(open, call.args);
    const counted = open.argumentsCounts.get(text);
    if (counted !== undefined) open.argumentsCounts.set(text, counted + 1);
    else if (open.argumentsCounts.size < maxSummaryArguments) open.argumentsCounts.set(text, 1);
    else open.otherArguments++;
  }

  /** Writes every pending summary now and closes them (the daemon's stop; tests). */
  flush(): void {
    for (const summary of [...this.summaries.values()]) {
      this.clock.clearTimer(summary.timer);
      this.close(summary);
      if (summary.calls > 0) this.writeSummary(summary);
    }
  }

  /**
   * The open summary of the call's account, tool, channel and conversation, if any. The summary
   * found last is tried first (four string comparisons): a client reading in a loop hits it on
   * every call, without building and hashing a key string.
   */
  private openSummaryOf(call: AuditedToolCall): OpenSummary | undefined {
    const last = this.lastFound;
    if (last !== undefined && sameIdentity(last.identity, call)) return last;
    const found = this.summaries.get(summaryKey(call));
    if (found !== undefined) this.lastFound = found;
    return found;
  }

  /**
   * The audited arguments text of a counted call: the previous call's text when the arguments
   * are the same JSON (a loop reads the same tags over and over), else computed. Only short
   * arguments are kept for the comparison: a summary may stay open for as long as calls go on.
   */
  private argumentsTextOf(summary: OpenSummary, args: unknown): string {
    if (summary.lastArguments !== undefined && sameJson(args, summary.lastArguments.args, 0)) {
      return summary.lastArguments.text;
    }
    const text = auditedArguments(args);
    summary.lastArguments =
      text.length <= maxComparedArguments && !text.endsWith('…') ? { args, text } : undefined;
    return text;
  }

  private open(first: AuditedToolCall): void {
    const { tool, account, via, conversationId } = first;
    const summary: OpenSummary = {
      key: summaryKey(first),
      identity: { tool, account, via, conversationId },
      calls: 0,
      firstAt: 0,
      lastAt: 0,
      argumentsCounts: new Map(),
      lastArguments: undefined,
      otherArguments: 0,
      truncated: false,
      timer: undefined,
    };
    this.summaries.set(summary.key, summary);
    this.lastFound = summary;
    this.schedule(summary);
  }

  private close(summary: OpenSummary): void {
    this.summaries.delete(summary.key);
    if (this.lastFound === summary) this.lastFound = undefined;
  }

  private schedule(summary: OpenSummary): void {
    const timer = this.clock.setTimeout(() => this.windowEnded(summary), this.windowMs);
    // A pending summary never keeps the process alive: the daemon flushes at its stop.
    (timer as { unref?: () => void }).unref?.();
    summary.timer = timer;
  }

  private windowEnded(summary: OpenSummary): void {
    if (summary.calls === 0) {
      this.close(summary);
      return;
    }
    this.writeSummary(summary);
    summary.calls = 0;
    summary.argumentsCounts = new Map();
    summary.otherArguments = 0;
    summary.truncated = false;
    this.schedule(summary);
  }

  /**
   * One call's line: `event`, `account`, `tool`, `arguments`, `via`, then `conversationId`
   * when known, `outcome`, and `truncated` when rows were cut. Built field by field, without
   * the temporary objects of conditional spreads: it is on every call's path.
   */
  private writeCall(call: AuditedToolCall): void {
    const tool = call.tool.slice(0, 64);
    const line: Record<string, unknown> = {
      event: 'assistant-tool',
      account: call.account,
      tool,
      arguments: auditedArguments(call.args),
      via: call.via,
    };
    if (call.conversationId !== undefined) line.conversationId = call.conversationId;
    line.outcome = call.outcome;
    if (call.truncated) line.truncated = true;
    this.audit.info(
      line,
      `assistant tool ${call.outcome === 'ok' ? 'answered' : 'refused'}: ${tool}`,
    );
  }

  /**
   * A summary's line: as a call's, with `calls` (how many it stands for), `firstCallAt` and
   * `lastCallAt` (ISO 8601), and `argumentsSeen` (a list of `{ arguments, calls }`) in place of
   * `arguments` (a field keeps one type for log shippers), plus `callsWithOtherArguments` when
   * more distinct texts came than are listed.
   */
  private writeSummary(summary: OpenSummary): void {
    const first = summary.identity;
    const tool = first.tool.slice(0, 64);
    const line: Record<string, unknown> = {
      event: 'assistant-tool',
      account: first.account,
      tool,
      argumentsSeen: [...summary.argumentsCounts].map(([text, calls]) => ({
        arguments: text,
        calls,
      })),
      via: first.via,
    };
    if (first.conversationId !== undefined) line.conversationId = first.conversationId;
    line.outcome = 'ok';
    if (summary.truncated) line.truncated = true;
    line.calls = summary.calls;
    if (summary.otherArguments > 0) line.callsWithOtherArguments = summary.otherArguments;
    line.firstCallAt = new Date(summary.firstAt).toISOString();
    line.lastCallAt = new Date(summary.lastAt).toISOString();
    this.audit.info(
      line,
      `assistant tool answered: ${tool}, ${summary.calls} more call${summary.calls === 1 ? '' : 's'}`,
    );
  }
}

/** The arguments as at most {@link maxAuditedArguments} characters of JSON. */
function auditedArguments(args: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(args ?? {}) ?? 'null';
  } catch {
    text = '(not JSON)';
  }
  return text.length > maxAuditedArguments ? `${text.slice(0, maxAuditedArguments)}…` : text;
}

function summaryKey(call: SummaryIdentity): string {
  return `${call.account}\u0000${call.tool}\u0000${call.via}\u0000${call.conversationId ?? ''}`;
}

function sameIdentity(a: SummaryIdentity, b: SummaryIdentity): boolean {
  return (
    a.tool === b.tool &&
    a.account === b.account &&
    a.via === b.via &&
    a.conversationId === b.conversationId
  );
}

/**
 * True when `a` and `b` serialize to the same JSON text: the same primitives (`===`), arrays of
 * the same length, and distinct plain objects with the same keys in the same order. Anything
 * else (one object compared with itself, since it may have changed; a Date, a class instance,
 * NaN, nesting deeper than {@link maxComparedDepth}) is "not the same", so the caller
 * serializes: never a wrong text, at worst a lost shortcut.
 */
function sameJson(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return typeof a !== 'object' || a === null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (depth >= maxComparedDepth) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) {
      if (!sameJson(a[index], b[index], depth + 1)) return false;
    }
    return true;
  }
  if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  const otherKeys = Object.keys(b);
  if (keys.length !== otherKeys.length) return false;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    if (key !== otherKeys[index]) return false;
    if (
      !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1)
    )
      return false;
  }
  return true;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
