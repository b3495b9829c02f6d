/**
 * E-mail of alarms (the profile's `notifications`): hears the alarm transitions, applies each
 * rule's filter, delay and consolidation window, and sends the messages through the SMTP server
 * with nodemailer, one at a time, retried with backoff.
 *
 * - An alarm is announced when a transition leaves it Unacknowledged (it turned active, or came
 *   back from an overlay active and unacknowledged) and at each ReAlarm.
 * - `delayMs`: the rule looks again that long after the announcement; only an alarm still
 *   Unacknowledged or ReturnedUnacknowledged then qualifies (acknowledged, shelved, suppressed,
 *   out of service or removed meanwhile: nothing is sent).
 * - `consolidationMs`: the first alarm that qualifies opens the rule's window; at its end one
 *   message lists every alarm that qualified in it (each alarm once, its latest announcement).
 * - Sending: at most {@link sendAttempts} attempts per message, waiting
 *   {@link retryWaitsMs} between them (on the injected clock); a message whose attempts all
 *   failed is dropped and counted. At most {@link maxQueuedMessages} wait; beyond, the oldest go.
 * - Health: status On (the last attempt succeeded, or none yet), Error with the reason (the SMTP
 *   server's answer or the network error, never the password), Off when no `notifications`
 *   section is in force. Shown in the tags `Notifications/Email/Status` and
 *   `Notifications/Email/LastError` and in the metrics. Nothing here can stop the daemon: every
 *   failure is caught, logged and counted.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import { type AlarmFeed, alarmFilterTakes } from '../alarms/alarm-filter.js';
import type { AlarmTransition } from '../alarms/alarm-state.js';
import type { Clock, TimerHandle } from '../clock.js';
import { secretMask } from '../profile/secret-fields.js';
import type { TagStore } from '../tags/tag-store.js';
import { composeAlarmEmail, type MailedAlarm } from './alarm-email.js';
import type { NotificationRule, NotificationsConfig, SmtpConfig } from './notifications-schema.js';

/** Attempts per message, in all. */
export const sendAttempts = 5;
/** Waits before attempts 2, 3, 4 and 5, ms. */
export const retryWaitsMs: readonly number[] = [1_000, 5_000, 30_000, 120_000];
/** Most messages waiting to be sent; beyond, the oldest are dropped and counted as failed. */
export const maxQueuedMessages = 1_000;

/** On, Off or Error, as the publishers'. */
export type NotifierStatus = 'On' | 'Off' | 'Error';

/** What the metrics and the health tags show of the e-mail notifier. */
export interface EmailNotifierState {
  status: NotifierStatus;
  /** Why it is Error or Off. */
  reason?: string;
  /** Messages the SMTP server accepted, since the daemon started. */
  sent: number;
  /** Messages dropped: every attempt failed, or the queue was full. */
  failed: number;
  /** Attempts that failed and were tried again. */
  retries: number;
  /** Messages waiting to be sent (retries included). */
  queued: number;
}

/** The ids of the notifier's health tags. */
export const emailHealthTagIds = {
  status: 'Notifications/Email/Status',
  lastError: 'Notifications/Email/LastError',
} as const;

/** Dependencies of {@link EmailNotifier}. */
export interface EmailNotifierDeps {
  /** The running alarms. */
  alarms: AlarmFeed;
  /** Runs the delays, windows and retry waits. */
  clock: Clock;
  logger: Logger;
  /** Where the health tags are written. */
  store: TagStore;
}

interface Message {
  rule: string;
  recipients: string[];
  subject: string;
  text: string;
  attempts: number;
}

interface RuleWindow {
  timer: TimerHandle;
  alarms: Map<string, AlarmTransition>;
}

/** See the module comment. One instance per daemon; {@link apply} puts a section in force. */
export class EmailNotifier {
  private config: NotificationsConfig | undefined;
  private transport: Transporter | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly delays = new Map<string, TimerHandle>();
  private readonly windows = new Map<string, RuleWindow>();
  private queue: Message[] = [];
  private sending = false;
  private retryTimer: TimerHandle | undefined;
  private status: NotifierStatus = 'Off';
  private reason: string | undefined = 'no notifications section in the profile';
  private readonly counters = { sent: 0, failed: 0, retries: 0 };
  private readonly log: Logger;

  constructor(private readonly deps: EmailNotifierDeps) {
    this.log = deps.logger.child({ component: 'notifications' });
    deps.store.define([
      {
        fullTagId: emailHealthTagIds.status,
        metadata: { description: 'Status of alarm e-mail: On, Off or Error' },
      },
      {
        fullTagId: emailHealthTagIds.lastError,
        metadata: { description: 'Empty when healthy, else why the last e-mail attempt failed' },
      },
    ]);
    this.writeHealth();
  }

  /**
   * Puts a `notifications` section in force (daemon start, reload), or none. A changed section
   * restarts the rules: pending delays and open windows of the old one are dropped (logged);
   * messages already composed are still sent, through the new server settings (one waiting for
   * its retry is tried at once). Never throws.
   */
  apply(config: NotificationsConfig | undefined): void {
    this.stopRules();
    this.transport?.close();
    this.transport = undefined;
    this.config = config;
    if (config === undefined) {
      if (this.queue.length > 0) {
        this.log.warn(
          { dropped: this.queue.length },
          'Alarm e-mail removed from the profile: the messages not yet sent are dropped.',
        );
        this.counters.failed += this.queue.length;
        this.queue = [];
      }
      this.deps.clock.clearTimer(this.retryTimer);
      this.retryTimer = undefined;
      this.setStatus('Off', 'no notifications section in the profile');
      return;
    }
    // A message waiting for its retry is tried again at once: the new settings may be the fix.
    this.deps.clock.clearTimer(this.retryTimer);
    this.retryTimer = undefined;
    const transport = createTransport(config.smtp);
    this.transport = transport;
    if (this.status === 'Off') this.setStatus('On', undefined);
    this.check(transport, config.smtp);
    if (config.rules.length > 0) {
      this.unsubscribe = this.deps.alarms.subscribe((transitions) => this.hear(transitions));
    }
    this.log.info(
      { rules: config.rules.map((rule) => rule.name), host: config.smtp.host },
      `Alarm e-mail: ${config.rules.length} rules through ${config.smtp.host}.`,
    );
    this.pump();
  }

  /**
   * Connects and logs in once (nodemailer's verify), so settings the server refuses show as
   * Error at once rather than at the first alarm. Until it answers the status is unchanged.
   */
  private check(transport: Transporter, smtp: SmtpConfig): void {
    transport.verify().then(
      () => {
        if (this.transport !== transport || this.sending || this.queue.length > 0) return;
        this.setStatus('On', undefined);
      },
      (error: unknown) => {
        if (this.transport !== transport) return;
        const why = describeSmtpError(error, smtp);
        this.setStatus('Error', `the SMTP server cannot be used: ${why}`);
        this.log.error(`Alarm e-mail: the SMTP server cannot be used: ${why}`);
      },
    );
  }

  /** Stops everything (daemon stop); what was not sent is dropped. */
  stop(): void {
    this.apply(undefined);
  }

  /** Status and counters (metrics). */
  state(): EmailNotifierState {
    return {
      status: this.status,
      ...(this.reason !== undefined ? { reason: this.reason } : {}),
      ...this.counters,
      queued: this.queue.length,
    };
  }

  /** Resolves once no message waits and none is being sent (tests). */
  async idle(): Promise<void> {
    while (this.sending || (this.queue.length > 0 && this.retryTimer === undefined)) {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private stopRules(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    const clock = this.deps.clock;
    for (const timer of this.delays.values()) clock.clearTimer(timer);
    const pending = this.delays.size + this.windows.size;
    this.delays.clear();
    for (const window of this.windows.values()) clock.clearTimer(window.timer);
    this.windows.clear();
    if (pending > 0) {
      this.log.info(
        { pending },
        'Alarm e-mail rules restarted: pending delays and windows dropped.',
      );
    }
  }

  private hear(transitions: readonly AlarmTransition[]): void {
    const rules = this.config?.rules ?? [];
    for (const transition of transitions) {
      const announced =
        transition.event === 'ReAlarm' ||
        (transition.to === 'Unacknowledged' && transition.from !== 'Unacknowledged');
      if (!announced) continue;
      for (const rule of rules) {
        if (!alarmFilterTakes(rule, transition)) continue;
        if (rule.delayMs === 0) {
          this.qualified(rule, transition);
          continue;
        }
        const key = `${rule.name}\u0000${transition.name}`;
        // The first announcement's delay runs on: a ReAlarm meanwhile does not push it back.
        if (this.delays.has(key)) continue;
        const timer = this.deps.clock.setTimeout(() => {
          this.delays.delete(key);
          const view = this.deps.alarms.get(transition.name);
          if (view?.state === 'Unacknowledged' || view?.state === 'ReturnedUnacknowledged') {
            this.qualified(rule, transition);
          }
        }, rule.delayMs);
        this.delays.set(key, timer);
      }
    }
  }

  private qualified(rule: NotificationRule, transition: AlarmTransition): void {
    if (rule.consolidationMs === 0) {
      this.enqueue(rule, [transition]);
      return;
    }
    const open = this.windows.get(rule.name);
    if (open !== undefined) {
      open.alarms.set(transition.name, transition);
      return;
    }
    const window: RuleWindow = {
      alarms: new Map([[transition.name, transition]]),
      timer: this.deps.clock.setTimeout(() => {
        this.windows.delete(rule.name);
        this.enqueue(rule, [...window.alarms.values()]);
      }, rule.consolidationMs),
    };
    this.windows.set(rule.name, window);
  }

  private enqueue(rule: NotificationRule, transitions: readonly AlarmTransition[]): void {
    const alarms: MailedAlarm[] = transitions.map((transition) => ({
      transition,
      state: this.deps.alarms.get(transition.name)?.state ?? transition.to,
    }));
    const { subject, text } = composeAlarmEmail(rule.name, alarms);
    this.queue.push({ rule: rule.name, recipients: rule.recipients, subject, text, attempts: 0 });
    if (this.queue.length > maxQueuedMessages) {
      const excess = this.queue.length - maxQueuedMessages;
      this.queue.splice(0, excess);
      this.counters.failed += excess;
      this.log.error(
        { dropped: excess },
        `Alarm e-mail: ${excess} messages were dropped, the oldest: the SMTP server is behind.`,
      );
    }
    this.pump();
  }

  /** Sends the oldest waiting message unless one is being sent or waits for its retry. */
  private pump(): void {
    if (this.sending || this.retryTimer !== undefined) return;
    const message = this.queue[0];
    const transport = this.transport;
    const config = this.config;
    if (message === undefined || transport === undefined || config === undefined) return;
    this.sending = true;
    message.attempts++;
    transport
      .sendMail({
        from: config.smtp.from,
        to: message.recipients,
        subject: message.subject,
        text: message.text,
      })
      .then(
        () => this.sent(message),
        (error: unknown) => this.attemptFailed(message, error, config.smtp),
      )
      .catch((error: unknown) => {
        // Bookkeeping above must not throw; if it ever does, the daemon still runs.
        this.log.error({ err: error }, 'Alarm e-mail: unexpected failure.');
      })
      .finally(() => {
        this.sending = false;
        this.pump();
      });
  }

  private sent(message: Message): void {
    this.dequeue(message);
    this.counters.sent++;
    if (this.status === 'Error')
      this.log.info('Alarm e-mail: the SMTP server accepts messages again.');
    this.setStatus('On', undefined);
  }

  private attemptFailed(message: Message, error: unknown, smtp: SmtpConfig): void {
    const why = describeSmtpError(error, smtp);
    const wasError = this.status === 'Error';
    this.setStatus('Error', `e-mail could not be sent: ${why}`);
    if (message.attempts < sendAttempts && this.queue[0] === message) {
      this.counters.retries++;
      const waitMs = retryWaitsMs[message.attempts - 1] ?? 0;
      (wasError ? this.log.debug : this.log.warn).call(
        this.log,
        { rule: message.rule, attempt: message.attempts, waitMs },
        `Alarm e-mail attempt ${message.attempts} failed (${why}); trying again in ${waitMs / 1000} s.`,
      );
      this.retryTimer = this.deps.clock.setTimeout(() => {
        this.retryTimer = undefined;
        this.pump();
      }, waitMs);
      return;
    }
    this.dequeue(message);
    this.counters.failed++;
    this.log.error(
      { rule: message.rule, attempts: message.attempts, recipients: message.recipients.length },
      `Alarm e-mail dropped after ${message.attempts} attempts: ${why}`,
    );
  }

  private dequeue(message: Message): void {
    const index = this.queue.indexOf(message);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private setStatus(status: NotifierStatus, reason: string | undefined): void {
    const changed = this.status !== status || this.reason !== reason;
    this.status = status;
    this.reason = reason;
    if (changed) this.writeHealth();
  }

  private writeHealth(): void {
    const utcTimestamp = new Date(this.deps.clock.now()).toISOString();
    this.deps.store.write([
      { fullTagId: emailHealthTagIds.status, utcTimestamp, quality: 'Good', value: this.status },
      {
        fullTagId: emailHealthTagIds.lastError,
        utcTimestamp,
        quality: 'Good',
        value: this.status === 'Error' ? (this.reason ?? '') : '',
      },
    ]);
  }
}

/** The nodemailer transport of the SMTP settings; certificate checks always on. */
function createTransport(smtp: SmtpConfig): Transporter {
  return nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port ?? (smtp.secure ? 465 : 587),
    secure: smtp.secure,
    requireTLS: !smtp.secure && smtp.requireTls,
    ...(smtp.username !== undefined
      ? { auth: { user: smtp.username, pass: smtp.password ?? '' } }
      : {}),
    connectionTimeout: smtp.timeoutMs,
    greetingTimeout: smtp.timeoutMs,
    socketTimeout: smtp.timeoutMs,
    tls: { rejectUnauthorized: true },
    logger: false,
    debug: false,
  });
}

/**
 * Why an attempt failed, in words, e.g. `EAUTH: Invalid login: 535 5.7.8 Authentication
 * credentials invalid`. The password never appears (masked should a server echo it).
 */
export function describeSmtpError(error: unknown, smtp: Pick<SmtpConfig, 'password'>): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  let text = typeof message === 'string' ? message : String(error);
  text = text.replace(/[\r\n]+/g, ' ').slice(0, 500);
  const password = smtp.password;
  if (password !== undefined && password.length > 0) text = text.split(password).join(secretMask);
  return typeof code === 'string' ? `${code}: ${text}` : text;
}
