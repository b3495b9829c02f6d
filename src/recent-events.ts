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

/** The rings of recent audit lines and of recent warnings and errors. */
export class RecentEvents {
  private readonly audit: RecentEvent[] = [];
  private readonly log: RecentEvent[] = [];
  private readonly auditBound: number;
  private readonly logBound: number;
  private nextId = 1;

  constructor(options: RecentEventsOptions = {}) {
    this.auditBound = options.auditEvents ?? defaultAuditEvents;
    this.logBound = options.logEvents ?? defaultLogEvents;
  }

  /** Takes one or more JSON lines, as pino writes them to a destination. */
  write(text: string): void {
    for (const line of text.split('\n')) {
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
    return rings
      .flat()
      .filter((event) => event.id > afterId)
      .sort((a, b) => a.id - b.id);
  }

  private take(line: string): void {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(line);
    } catch {
      return; // not a JSON line (a pretty terminal destination is not teed here)
    }
    // A line that carries a secret by design (the first start's admin password) stays in the log.
    if (parsed.inEventView === false) return;
    const level = levelNames[Number(parsed.level)];
    const kind = parsed.component === 'audit' ? 'audit' : level && level !== 'info' ? 'log' : null;
    if (level === undefined || kind === null) return;
    const details: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(parsed)) {
      if (!lineKeys.has(key)) details[key] = value;
    }
    const event: RecentEvent = {
      id: this.nextId++,
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
    const ring = kind === 'audit' ? this.audit : this.log;
    ring.push(event);
    if (ring.length > (kind === 'audit' ? this.auditBound : this.logBound)) ring.shift();
  }
}
