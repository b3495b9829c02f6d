/**
 * The one way back to the devices: routes a client's tag writes to the drivers that own the
 * tags. The map from fullTagId to driver is filled when each driver has started (and emptied
 * when it stops); the API imports this writer, never a driver.
 *
 * A request is all or nothing up to the device: every item is checked before anything is sent
 * (the tag exists, is writable, its driver allows writes, the value fits the tag's type and
 * writeMin/writeMax, the driver's own device-side checks), then the account's write budget is
 * taken; any failure refuses the whole request and nothing is written. Then each item is written
 * once, in order per driver, never retried: a write whose answer did not come is reported
 * Uncertain (OutcomeUnknown), since repeating it could move a machine twice. Every item
 * written, and every item a check refused, leaves an audit line; a request refused by the rate
 * limit, or before its items could be read (the route's schema, a body that is no JSON), leaves
 * one bounded line for the whole request (src/tags/write-audit.ts).
 */
import type { Logger } from 'pino';
import {
  type FieldError,
  type TagdError,
  TooManyRequestsError,
  ValidationError,
} from '../errors.js';
import { tagPathProblem } from './tag-path.js';
import type { TagStore } from './tag-store.js';
import type {
  TagWritePort,
  WritableTag,
  WriteReason,
  WriteRequest,
  WriteResult,
  WriteStatus,
  WriteValue,
} from './tag-write-port.js';
import { auditedErrors, auditedItems, auditedTagIds, shortened } from './write-audit.js';
import { defaultWritesPerSecond, WriteRateLimiter } from './write-rate-limiter.js';

/** Most items in one write request. */
export const maxWritesPerRequest = 100;

/** One item of a client's request. */
export interface TagWriteItem {
  fullTagId: string;
  value: WriteValue;
  /** A number `value` as the client spelt it (its JSON text), when known: for exact checks. */
  numberText?: string;
}

/** The answer to one item, in the order of the request. */
export interface TagWriteOutcome {
  fullTagId: string;
  status: WriteStatus;
  reason?: WriteReason;
  message?: string;
}

/**
 * Fields added to each audit line of a write request: where it came from when not from the
 * REST API (a Sparkplug DCMD `{ via: 'sparkplug', publisher, topic, primaryHostId }`), or the
 * assistant proposal a person confirmed (`{ proposal, proposedBy }`). Short values only.
 */
export type WriteAuditContext = Readonly<Record<string, unknown>>;

/** Where the writer counts the items it answered (metrics); never told tags or accounts. */
export interface TagWriteMetrics {
  /** One item ended: the driver's status, or `Refused` before reaching a driver. */
  written(status: WriteStatus | 'Refused'): void;
}

/** Collaborators of {@link TagWriter}. */
export interface TagWriterOptions {
  store: TagStore;
  /** The audit log (`component: audit`): one line per item, or per refused request. */
  audit: Logger;
  /** For failures of a driver's write itself (a bug, not a device answer). */
  logger: Logger;
  /** Epoch ms now (the injected clock), for the rate limit. */
  now: () => number;
  /** Writes per second and account (items, not requests). Default 20. */
  writesPerSecond?: number;
  /** Counts the items answered. Default: not counted. */
  metrics?: TagWriteMetrics;
}

interface Route {
  driver: TagWritePort;
  tag: WritableTag;
}

/** Routes writes to the owning drivers, after checking, limiting and before auditing them. */
export class TagWriter {
  private readonly routes = new Map<string, Route>();
  /** Unsubscribers of the drivers whose writable tags change while they run. */
  private readonly followed = new Map<TagWritePort, () => void>();
  private readonly limiter: WriteRateLimiter;

  constructor(private readonly options: TagWriterOptions) {
    this.limiter = new WriteRateLimiter(
      options.now,
      options.writesPerSecond ?? defaultWritesPerSecond,
    );
  }

  /**
   * Adds the writable tags of a started driver. A driver with writable tags and `allowWrites`
   * false is registered too, so a write names the switch that refuses it; it is logged once.
   */
  register(driver: TagWritePort): void {
    if (driver.onWritableTagsChanged !== undefined && !this.followed.has(driver)) {
      this.followed.set(
        driver,
        driver.onWritableTagsChanged(() => this.reroute(driver)),
      );
    }
    this.route(driver, true);
  }

  /** Routes the driver's writable tags as it lists them now, replacing its earlier routes. */
  private reroute(driver: TagWritePort): void {
    if (!this.followed.has(driver)) return;
    for (const [id, route] of this.routes) if (route.driver === driver) this.routes.delete(id);
    this.route(driver, false);
  }

  private route(driver: TagWritePort, warn: boolean): void {
    const tags = driver.writableTags?.() ?? [];
    if (tags.length === 0 || driver.write === undefined) return;
    for (const tag of tags) this.routes.set(tag.fullTagId, { driver, tag });
    if (!warn) return;
    const disabled = tags.filter((tag) => !tag.allowWrites).length;
    if (disabled > 0) {
      this.options.logger.warn(
        { component: driver.name, writableTags: disabled },
        `${disabled} tag(s) of driver ${driver.name} are marked writable but the driver's allowWrites is false: writes to them are refused`,
      );
    }
  }

  /** Removes a driver's tags (before it stops): writes to them are refused as not writable. */
  unregister(driver: TagWritePort): void {
    this.followed.get(driver)?.();
    this.followed.delete(driver);
    for (const [id, route] of this.routes) if (route.driver === driver) this.routes.delete(id);
  }

  /** Whether a write to the tag would pass the profile checks (writable, allowed). */
  isWritable(fullTagId: string): boolean {
    return this.routes.get(fullTagId)?.tag.allowWrites === true;
  }

  /**
   * How a client may write the tag, for browse answers: its `writeMin`/`writeMax` when the tag
   * is writable and its driver allows writes; undefined otherwise (every write would be refused).
   */
  writeAccess(fullTagId: string): { writeMin?: number; writeMax?: number } | undefined {
    const route = this.routes.get(fullTagId);
    if (route?.tag.allowWrites !== true) return undefined;
    const { writeMin, writeMax } = route.tag;
    return {
      ...(writeMin !== undefined ? { writeMin } : {}),
      ...(writeMax !== undefined ? { writeMax } : {}),
    };
  }

  /**
   * Checks every item, takes the account's budget, writes, audits.
   * @param account the account writing (audited; the rate limit is per account).
   * @param auditContext fields added to every audit line of this request, e.g. the assistant
   *   proposal a person confirmed (`{ proposal, proposedBy }`). Default none.
   * @returns one outcome per item, in order.
   * @throws ValidationError (400, every refused item named `writes[i].…`) when any item fails a
   *   check; TooManyRequestsError (429 `write-rate-exceeded`) when the account is over its
   *   budget. Nothing is written in either case.
   */
  async write(
    account: string,
    items: readonly TagWriteItem[],
    auditContext: WriteAuditContext = {},
  ): Promise<TagWriteOutcome[]> {
    const routes: Route[] = [];
    const errors: FieldError[] = [];
    items.forEach((item, index) => {
      const route = this.check(item, index, errors);
      if (route !== undefined) routes[index] = route;
    });
    if (errors.length === 0) errors.push(...(await this.deviceChecks(items, routes)));
    if (errors.length > 0) {
      this.refused(account, items, 'ValidationFailed', auditContext);
      throw new ValidationError(
        `The write request was refused; nothing was written (${errors.length} problem${errors.length === 1 ? '' : 's'}).`,
        errors,
      );
    }
    const retryAfter = this.limiter.take(account, items.length);
    if (retryAfter > 0) {
      this.rateLimited(account, items, auditContext);
      throw new TooManyRequestsError(
        `Account ${account} is writing faster than ${this.options.writesPerSecond ?? defaultWritesPerSecond} values per second; nothing was written. Retry after ${retryAfter} s.`,
        retryAfter,
        'write-rate-exceeded',
      );
    }
    // The value each tag held before, for the audit.
    const previous = items.map((item) => this.options.store.get(item.fullTagId)?.value);
    const results = await this.dispatch(items, routes);
    const outcomes = items.map((item, index) => {
      const result = results[index] as WriteResult;
      this.options.audit.info(
        {
          event: 'tag-write',
          account,
          ...auditContext,
          fullTagId: item.fullTagId,
          previousValue: previous[index] ?? null,
          requestedValue: item.value,
          status: result.status,
          ...(result.reason !== undefined ? { reason: result.reason } : {}),
        },
        `tag write ${result.status}: ${item.fullTagId}`,
      );
      this.options.metrics?.written(result.status);
      const outcome: TagWriteOutcome = { fullTagId: item.fullTagId, status: result.status };
      if (result.reason !== undefined) outcome.reason = result.reason;
      if (result.message !== undefined) outcome.message = result.message;
      return outcome;
    });
    return outcomes;
  }

  /** The profile and value checks of one item; problems go to `errors`. */
  private check(item: TagWriteItem, index: number, errors: FieldError[]): Route | undefined {
    const at = (field: string) => `writes[${index}].${field}`;
    const { fullTagId, value } = item;
    const pathProblem = tagPathProblem(fullTagId);
    if (pathProblem !== undefined) {
      errors.push({ path: at('fullTagId'), message: `Invalid tag path: ${pathProblem}` });
      return undefined;
    }
    const route = this.routes.get(fullTagId);
    if (route === undefined) {
      errors.push({
        path: at('fullTagId'),
        message: this.options.store.get(fullTagId)
          ? `Tag ${fullTagId} is not writable.`
          : `Tag ${fullTagId} does not exist.`,
      });
      return undefined;
    }
    if (!route.tag.allowWrites) {
      errors.push({
        path: at('fullTagId'),
        message: `Writes are disabled for driver ${route.driver.name}.`,
      });
      return undefined;
    }
    if (typeof value === 'number' && !Number.isFinite(value)) {
      errors.push({ path: at('value'), message: 'NaN and infinities cannot be written.' });
      return undefined;
    }
    const problem = route.tag.check(value, item.numberText);
    if (problem !== undefined) {
      errors.push({ path: at('value'), message: `Tag ${fullTagId}: the value ${problem}.` });
      return undefined;
    }
    const { writeMin, writeMax } = route.tag;
    // A 64-bit integer may come as a decimal string: compared exactly (a BigInt and a number
    // compare by their mathematical values), not as its nearest double, which may lie within.
    const number =
      typeof value === 'number'
        ? value
        : typeof value === 'string' && /^-?\d+$/.test(value)
          ? BigInt(value)
          : NaN;
    if (writeMin !== undefined && number < writeMin) {
      errors.push({
        path: at('value'),
        message: `Tag ${fullTagId}: ${value} is below writeMin ${writeMin}.`,
      });
      return undefined;
    }
    if (writeMax !== undefined && number > writeMax) {
      errors.push({
        path: at('value'),
        message: `Tag ${fullTagId}: ${value} is above writeMax ${writeMax}.`,
      });
      return undefined;
    }
    return route;
  }

  /** The drivers' own checks (OPC UA DataType), per driver; still nothing is written. */
  private async deviceChecks(
    items: readonly TagWriteItem[],
    routes: readonly Route[],
  ): Promise<FieldError[]> {
    const errors: FieldError[] = [];
    await Promise.all(
      [...this.byDriver(routes)].map(async ([driver, indexes]) => {
        if (driver.checkWrites === undefined) return;
        const problems = await driver.checkWrites(
          indexes.map((index) => items[index] as WriteRequest),
        );
        problems.forEach((problem, position) => {
          if (problem === undefined) return;
          const index = indexes[position] as number;
          errors.push({
            path: `writes[${index}].value`,
            message: `Tag ${items[index]?.fullTagId}: ${problem}`,
          });
        });
      }),
    );
    return errors.sort((a, b) => a.path.localeCompare(b.path, 'en', { numeric: true }));
  }

  /** Each driver gets its items in request order; drivers work in parallel. */
  private async dispatch(
    items: readonly TagWriteItem[],
    routes: readonly Route[],
  ): Promise<WriteResult[]> {
    const results: WriteResult[] = new Array(items.length);
    await Promise.all(
      [...this.byDriver(routes)].map(async ([driver, indexes]) => {
        let answers: WriteResult[];
        try {
          answers = await (driver.write as NonNullable<TagWritePort['write']>)(
            indexes.map((index) => ({
              fullTagId: (items[index] as TagWriteItem).fullTagId,
              value: (items[index] as TagWriteItem).value,
            })),
          );
        } catch (error) {
          // A bug, not a device answer: whether anything went out is unknown, so nothing is
          // claimed either way.
          this.options.logger.error(
            { err: error, component: driver.name },
            'a driver write failed',
          );
          answers = indexes.map(() => ({
            status: 'Uncertain',
            reason: 'OutcomeUnknown',
            message:
              'The driver failed while writing (see the log); whether the device applied the write is unknown.',
          }));
        }
        indexes.forEach((index, position) => {
          results[index] = answers[position] ?? {
            status: 'Uncertain',
            reason: 'OutcomeUnknown',
            message: 'The driver gave no answer for this write.',
          };
        });
      }),
    );
    return results;
  }

  private byDriver(routes: readonly Route[]): Map<TagWritePort, number[]> {
    const groups = new Map<TagWritePort, number[]>();
    routes.forEach((route, index) => {
      const indexes = groups.get(route.driver);
      if (indexes === undefined) groups.set(route.driver, [index]);
      else indexes.push(index);
    });
    return groups;
  }

  /**
   * Audits a request refused before its items could be read, one bounded line: its body failed
   * the request schema (`ValidationFailed`, with the first problems) or could not be read at all
   * (`UnreadableBody`: not JSON, over the size limit, not application/json). Its values are not
   * logged: they may be anything, of any size.
   * @param body the body as parsed (undefined when unreadable).
   * @param bodyBytes the body's declared length (Content-Length), when known.
   */
  refusedRequest(account: string, error: TagdError, body: unknown, bodyBytes?: number): void {
    const problems = error instanceof ValidationError ? error.errors : undefined;
    this.options.audit.info(
      {
        event: 'tag-write',
        account,
        status: 'Refused',
        reason: problems ? 'ValidationFailed' : 'UnreadableBody',
        code: error.code,
        ...auditedItems(body),
        ...(problems ? auditedErrors(problems) : {}),
        ...(bodyBytes !== undefined ? { bodyBytes } : {}),
      },
      `tag write request refused: ${shortened(error.message)}`,
    );
  }

  /**
   * Audits a request refused by the rate limit: one line for the request with its number of
   * items, not one per item (an account over its budget could otherwise fill the audit log at
   * the speed it sends requests, each up to 100 values of 4 KB).
   */
  private rateLimited(
    account: string,
    items: readonly TagWriteItem[],
    auditContext: Readonly<Record<string, unknown>>,
  ): void {
    this.options.audit.info(
      {
        event: 'tag-write',
        account,
        ...auditContext,
        status: 'Refused',
        reason: 'RateLimited',
        items: items.length,
        ...auditedTagIds(items.map((item) => item.fullTagId)),
      },
      `tag write request refused: rate limit (${items.length} item${items.length === 1 ? '' : 's'})`,
    );
    for (let i = 0; i < items.length; i++) this.options.metrics?.written('Refused');
  }

  /** Audits a request refused by the checks before any I/O, one line per item. */
  private refused(
    account: string,
    items: readonly TagWriteItem[],
    reason: string,
    auditContext: Readonly<Record<string, unknown>>,
  ): void {
    const { audit, store } = this.options;
    for (const item of items) {
      audit.info(
        {
          event: 'tag-write',
          account,
          ...auditContext,
          fullTagId: item.fullTagId,
          previousValue: store.get(item.fullTagId)?.value ?? null,
          requestedValue: item.value,
          status: 'Refused',
          reason,
        },
        `tag write refused: ${item.fullTagId}`,
      );
      this.options.metrics?.written('Refused');
    }
  }
}
