/**
 * The daemon's recent events in memory, for the console's event view (`GET /api/v2/Events`):
 * the audit lines (sign-ins, writes, configuration changes: component `audit`) and every
 * warning and error any component logged, so "see the log for details" can be seen without a
 * shell on the host. Two bounded rings, so a flood of warnings never pushes the sign-ins out.
 *
 * It is a pino destination (see createLogger's `recentEvents`): it sees each line after pino's
 * redaction, so a secret masked in the log is masked here too.
 */

/** pino's numeric levels, by name. */
const levelNames: Record<number, RecentEvent['level']> = {
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};

/** Keys of a pino line that the event carries in its own fields. */
const lineKeys = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'component']);

/** Default bound of the audit ring: lines. */
export const defaultAuditEvents = 1000;
/** Default bound of the warnings-and-errors ring: lines. */
export const defaultLogEvents = 500;
/** Bound of one event's `details`, as JSON: characters. Larger details are replaced by a note. */
export const maxDetailsChars = 4096;

/** One remembered log line. */
export interface RecentEvent {
  /** Increasing number of the event since start, for paging and for new events only. */
  id: number;
  /** ISO 8601 time the line was logged. */
  time: string;
  /** `audit`: an audit line (any level); `log`: a warning or an error of any component. */
  kind: 'audit' | 'log';
  level: 'info' | 'warn' | 'error' | 'fatal';
  /** The component that logged it (a driver's or publisher's name, `http`, `history`...). */
  component?: string;
  message: string;
  /** The line's other fields (the audit line's `event`, `username`, ...). */
  details: Record<string, unknown>;
}

/** Options of {@link RecentEvents}. */
export interface RecentEventsOptions {
  /** Audit lines kept. Default {@link defaultAuditEvents}. */
  auditEvents?: number;
  /** Warnings and errors kept. Default {@link defaultLogEvents}. */
  logEvents?: number;
}

/**
 * A kept line: its raw JSON until the event view asks for it, then the parsed event (or null when
 * the parse shows it is not an event after all).
 */
interface KeptLine {
  id: number;
  line: string;
  event?: RecentEvent | null;
}

/** pino's first field: `{"level":30,` (pino writes the level first). */
const levelPrefix = /^\{"level":(\d+)/;
/** How an audit line's component reads in its JSON (bindings are written as given). */
const auditComponent = '"component":"audit"';

/**
 * The rings of recent audit lines and of recent warnings and errors.
 *
 * Decision: a line is only classified by its text when logged (its level prefix, and for an info
 * line whether it names the audit component) and parsed when the event view is read. Parsing
 * every line when logged cost about 3.5 µs an audit line, paid by every audited write and every
 * assistant tool call; the view is read rarely.
 */
export class RecentEvents {
  private readonly audit: KeptLine[] = [];
  private readonly log: KeptLine[] = [];
  private readonly auditBound: number;
  private readonly logBound: number;
  private nextId = 1;

  constructor(options: RecentEventsOptions = {}) {
    this.auditBound = options.auditEvents ?? defaultAuditEvents;
    this.logBound = options.logEvents ?? defaultLogEvents;
  }

  /** Takes one or more JSON lines, as pino writes them to a destination. */
  write(text: string): void {
    // pino hands a destination one line ending in a newline; JSON lines hold no other newline.
    const single = text.indexOf('\n') === text.length - 1;
    for (const line of single ? [text.slice(0, -1)] : text.split('\n')) {
      if (line.trim() !== '') this.take(line);
    }
  }

  /**
   * The events kept, oldest first.
   * @param kind Which ring; both when absent (merged in order).
   * @param afterId Only events with a greater id (to fetch what is new).
   */
  list(kind?: RecentEvent['kind'], afterId = 0): RecentEvent[] {
    const rings =
      kind === 'audit' ? [this.audit] : kind === 'log' ? [this.log] : [this.audit, this.log];
    const events: RecentEvent[] = [];
    for (const ring of rings) {
      for (const kept of ring) {
        if (kept.id <= afterId) continue;
        if (kept.event === undefined) kept.event = parseEvent(kept.id, kept.line);
        if (kept.event !== null) events.push(kept.event);
      }
    }
    return events.sort((a, b) => a.id - b.id);
  }

  private take(line: string): void {
    const prefix = levelPrefix.exec(line);
    // A line pino did not write (no level first) is classified by parsing it at once.
    const kind = prefix ? kindOf(Number(prefix[1]), line) : parseEvent(0, line)?.kind;
    if (kind === undefined) return;
    const ring = kind === 'audit' ? this.audit : this.log;
    ring.push({ id: this.nextId++, line });
    if (ring.length > (kind === 'audit' ? this.auditBound : this.logBound)) ring.shift();
  }
}

/** The ring a line with this level goes to, if any: audit lines at any level, warnings and up. */
function kindOf(level: number, line: string): RecentEvent['kind'] | undefined {
  const audit = line.indexOf(auditComponent);
  if (audit !== -1) {
    // Before any nested object it is the line's own component (pino writes the bindings before
    // the logged object's fields); otherwise only a parse can tell.
    const nested = line.indexOf('{', 1);
    if (nested === -1 || audit < nested) return 'audit';
    return parseEvent(0, line)?.kind;
  }
  return level >= 40 && levelNames[level] !== undefined ? 'log' : undefined;
}

/** The event of a kept line, or null when it is not one (unreadable, not audit, kept out). */
function parseEvent(id: number, line: string): RecentEvent | null {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null; // not a JSON line (a pretty terminal destination is not teed here)
  }
  // A line that carries a secret by design (the first start's admin password) stays in the log.
  if (parsed.inEventView === false) return null;
  const level = levelNames[Number(parsed.level)];
  const kind = parsed.component === 'audit' ? 'audit' : level && level !== 'info' ? 'log' : null;
  if (level === undefined || kind === null) return null;
  const details: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!lineKeys.has(key)) details[key] = value;
  }
  return {
    id,
    time: typeof parsed.time === 'string' ? parsed.time : new Date().toISOString(),
    kind,
    level,
    ...(typeof parsed.component === 'string' && kind === 'log'
      ? { component: parsed.component }
      : {}),
    message: typeof parsed.msg === 'string' ? parsed.msg : '',
    details:
      JSON.stringify(details).length > maxDetailsChars
        ? { note: `details of over ${maxDetailsChars} characters left out; see the log` }
        : details,
  };
}
