/**
 * Live reconfiguration: brings the running components in line with a new profile by restarting
 * only what changed ({@link diffProfiles}), in dependency order, while the API keeps answering.
 * Reload is composition: each component is stopped and started through the same start/stop it
 * has at daemon start.
 *
 * Two ways in, serialized with each other and with every API edit of the profile (they all run
 * in {@link ProfileService.exclusive}): {@link ProfileReloader.reload} re-reads the profile file
 * (SIGHUP, `POST /api/v2/Profile/Reload`, `tagd profile import`), and
 * {@link ProfileReloader.edit} saves an API edit (the Drivers routes) and applies it at once.
 *
 * Order: the license is re-read; publishers that were removed stop; collections follow; the
 * history section restarts when it changed; drivers that were removed or changed stop (their
 * tags leave the store) and changed or added ones start (a relay driver the license no longer
 * allows stops and is listed in Error; one it now allows starts); the extensions server
 * restarts when its section changed; last, publishers that were added or changed start, and those whose
 * conditions changed (the license, a collection they select appeared or went) are restarted;
 * webhook and MQTT publishers alike. Alarm definitions are applied after the drivers (their
 * sources exist then), each alarm keeping its state unless removed or disabled; then a changed
 * `notifications` section (alarm e-mail) is put in force.
 * A component that fails to start is reported in `failed`; the others go on.
 */
import type { Logger } from 'pino';
import type { DriverConfig } from '../../drivers/registry.js';
import {
  type FieldError,
  ProfileCorruptError,
  ProfileInvalidError,
  ProfileNotFoundError,
  ServiceBusyError,
} from '../errors.js';
import type { ProfileService } from '../profile/profile-service.js';
import type { ProfileStore } from '../profile/profile-store.js';
import type { Profile, ProfileInput } from '../profile/schema.js';
import type { MqttConfig } from '../publishers/mqtt/schema.js';
import type { PublisherManager, PublisherState } from '../publishers/publisher.js';
import type { WebhookConfig } from '../publishers/webhook/schema.js';
import type { RunningDrivers } from '../runtime/running-drivers.js';
import type { StartupProblem } from '../startup-checks.js';
import type { Collections } from '../tags/collections.js';
import { diffProfiles, type EntryChange, type ProfileDiff } from './profile-diff.js';

/** What a reload did, component by component (`drivers/<name>`, `collections/<name>`, …). */
export interface ReloadSummary {
  /** Components the new profile added, now running. */
  started: string[];
  /** Components whose configuration changed, stopped and started again. */
  restarted: string[];
  /** Components the new profile removed or disabled, now stopped. */
  stopped: string[];
  /** Components left running as they were. */
  unchanged: string[];
  /**
   * Sections that changed but take effect only at the next restart of tagd (`server`,
   * `security`, `queries`); the profile in force already holds them.
   */
  requiresRestart: string[];
  /** Components that could not start with their new configuration, and why. */
  failed: { component: string; message: string }[];
}

/** Who asked for a reload, for the log and the hook. */
export type ReloadSource = 'signal' | 'api' | 'cli';

/** Told when a reload of the profile file starts and ends (systemd `RELOADING=1`/`READY=1`). */
export type ReloadListener = (
  event:
    | { phase: 'start'; source: ReloadSource }
    | { phase: 'end'; source: ReloadSource; summary?: ReloadSummary; error?: unknown },
) => void;

/** The running parts a reload changes; the daemon provides them. */
export interface ReloadTargets {
  /** Re-reads the license the profile names. @returns true when what it grants changed. */
  reloadLicense(profile: Profile): Promise<boolean>;
  collections: Collections;
  /** Stops the running history, if any, and starts the one `profile` configures, if any. */
  restartHistory(profile: Profile): Promise<void>;
  drivers: RunningDrivers;
  /** Stops the extensions server, if any, and starts the one `profile` configures, if any. */
  restartExtensions(profile: Profile, problems: readonly StartupProblem[]): Promise<void>;
  publishers: PublisherManager<WebhookConfig>;
  mqttPublishers: PublisherManager<MqttConfig, PublisherState>;
  /** The start-up checks (startup-checks.ts) on a profile, as `tagd start` runs them. */
  check(profile: Profile): Promise<StartupProblem[]>;
  /**
   * Puts the profile's alarm definitions in force (AlarmService.apply). Absent (tests of other
   * parts): alarm changes are not applied.
   */
  applyAlarms?(profile: Profile): void;
  /**
   * Puts the profile's `notifications` section in force (EmailNotifier.apply). Absent (tests of
   * other parts): changes there are not applied.
   */
  applyNotifications?(profile: Profile): void;
}

/** Options of {@link ProfileReloader}. */
export interface ProfileReloaderOptions {
  /** Reads the profile file (validation, sealing of plaintext secrets). */
  store: ProfileStore;
  /** The profile in force; reloads and edits run in its queue. */
  profile: ProfileService;
  targets: ReloadTargets;
  logger: Logger;
}

/** See the module comment. */
export class ProfileReloader {
  private readonly listeners = new Set<ReloadListener>();
  // Closed until the daemon has started every component, and again once it stops.
  private open = false;

  constructor(private readonly options: ProfileReloaderOptions) {}

  /** Accepts reloads and edits: the daemon calls it once every component has started. */
  accept(): void {
    this.open = true;
  }

  /**
   * Refuses further reloads and edits and waits for the one under way, so a stopping daemon
   * is not restarting components behind its back.
   */
  async close(): Promise<void> {
    this.open = false;
    await this.options.profile.exclusive(async () => undefined);
  }

  /** Subscribes to reloads of the profile file. Returns the function that unsubscribes. */
  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-reads the profile file and applies what changed. A reload asked for while another runs
   * waits for it. Logs the outcome (every error of a refused profile on a line of its own).
   * @throws ProfileInvalidError listing every error (schema, cross-field, start-up checks that
   *   would refuse a start; an unreadable or unparsable file as one error at `(root)`): nothing
   *   changed then, the running configuration stays. SecretUnsealError likewise.
   */
  async reload(source: ReloadSource): Promise<ReloadSummary> {
    const { logger } = this.options;
    this.requireOpen();
    this.emit({ phase: 'start', source });
    logger.info({ source }, 'reloading the profile');
    try {
      const summary = await this.options.profile.exclusive(async (session) => {
        this.requireOpen();
        const next = await this.readFile();
        const problems = await this.options.targets.check(next);
        const refused = problems.filter((problem) => problem.effect === 'refused');
        if (refused.length > 0) {
          throw new ProfileInvalidError(
            this.options.store.file,
            refused.map(({ path, message }) => ({ path, message })),
          );
        }
        const diff = diffProfiles(session.current(), next);
        session.adopt(next);
        return this.apply(diff, next, problems, true);
      });
      this.logSummary(source, summary, 'profile reloaded');
      this.emit({ phase: 'end', source, summary });
      return summary;
    } catch (error) {
      if (error instanceof ProfileInvalidError) {
        logger.error(
          { source, code: error.code, errors: error.errors },
          `profile reload refused, the running configuration stays: ${error.message}`,
        );
        for (const problem of error.errors) logger.error(`  ${problem.path}: ${problem.message}`);
      } else {
        logger.error({ source, err: error }, 'profile reload failed');
      }
      this.emit({ phase: 'end', source, error });
      throw error;
    }
  }

  /**
   * Saves an edit of the profile (as {@link ProfileService.update}) and applies what it changed
   * at once: the Drivers routes, so only the edited driver restarts.
   * @param what audit fields of the change (names, never secrets).
   * @throws ProfileInvalidError listing every problem, or what `edit` throws; nothing changed.
   */
  edit(edit: (draft: ProfileInput) => void, what: Record<string, unknown>): Promise<ReloadSummary> {
    this.requireOpen();
    return this.options.profile.exclusive(async (session) => {
      this.requireOpen();
      const before = session.current();
      const after = await session.update(edit, what);
      const problems = await this.options.targets.check(after);
      const summary = await this.apply(diffProfiles(before, after), after, problems, false);
      this.logSummary('api', summary, 'profile change applied');
      return summary;
    });
  }

  private requireOpen(): void {
    if (!this.open) {
      throw new ServiceBusyError(
        'tagd is starting or stopping: the profile cannot be reloaded now.',
      );
    }
  }

  // A file that cannot be read or parsed is refused like an invalid one: one error, at the root.
  private async readFile(): Promise<Profile> {
    try {
      return await this.options.store.load();
    } catch (error) {
      if (error instanceof ProfileCorruptError || error instanceof ProfileNotFoundError) {
        const errors: FieldError[] = [{ path: '(root)', message: error.message }];
        throw new ProfileInvalidError(this.options.store.file, errors);
      }
      throw error;
    }
  }

  private async apply(
    diff: ProfileDiff,
    profile: Profile,
    problems: readonly StartupProblem[],
    rereadLicense: boolean,
  ): Promise<ReloadSummary> {
    const { targets, logger } = this.options;
    const summary: ReloadSummary = {
      started: [],
      restarted: [],
      stopped: [],
      unchanged: [],
      requiresRestart: [...diff.requiresRestart],
      failed: [],
    };
    const attempt = async (component: string, run: () => Promise<unknown>) => {
      try {
        await run();
        return true;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.error({ err: error, component }, `${component} failed to start: ${message}`);
        summary.failed.push({ component, message });
        return false;
      }
    };

    let licenseChanged = false;
    if (rereadLicense || diff.license !== 'unchanged') {
      licenseChanged = await targets.reloadLicense(profile);
      (licenseChanged ? summary.restarted : summary.unchanged).push('license');
    }

    const publisherKinds = [
      { section: 'publishers.webhooks', changes: diff.webhooks, manager: targets.publishers },
      { section: 'publishers.mqtt', changes: diff.mqtt, manager: targets.mqttPublishers },
    ] as const;
    // Publishers that go stop first: nothing they read is stopped under a delivery.
    for (const { section, changes, manager } of publisherKinds) {
      for (const change of changes.filter((change) => change.kind === 'removed')) {
        await manager.remove(change.name);
        summary.stopped.push(`${section}/${change.name}`);
      }
    }

    // Before history and drivers: entries and tags join the collections they name at once.
    const collectionsAddedOrRemoved = new Set<string>();
    for (const change of diff.collections) {
      const id = `collections/${change.name}`;
      if (change.kind === 'removed') {
        targets.collections.delete(change.name);
        collectionsAddedOrRemoved.add(change.name);
        summary.stopped.push(id);
      } else if (change.after && change.kind !== 'unchanged') {
        targets.collections.put(change.after);
        if (change.kind === 'added') collectionsAddedOrRemoved.add(change.name);
        (change.kind === 'added' ? summary.started : summary.restarted).push(id);
      } else {
        summary.unchanged.push(id);
      }
    }

    if (diff.history === 'unchanged') {
      if (profile.history) summary.unchanged.push('history');
    } else if (await attempt('history', () => targets.restartHistory(profile))) {
      listFor(summary, diff.history).push('history');
    }

    for (const change of diff.drivers) {
      await this.applyDriver(change.name, change.kind, change.after, profile, problems, summary);
    }
    targets.drivers.arrange(profile.drivers.map((driver) => driver.name));

    const alarmsChanged =
      diff.alarmJournal !== 'unchanged' ||
      diff.alarms.some((change) => change.kind !== 'unchanged');
    if (alarmsChanged && targets.applyAlarms) {
      const applyAlarms = targets.applyAlarms;
      if (await attempt('alarms', async () => applyAlarms(profile))) {
        for (const change of diff.alarms) {
          const list =
            change.kind === 'unchanged' ? summary.unchanged : listFor(summary, change.kind);
          list.push(`alarms/${change.name}`);
        }
      }
    } else {
      for (const change of diff.alarms) summary.unchanged.push(`alarms/${change.name}`);
    }

    if (diff.notifications === 'unchanged') {
      if (profile.notifications) summary.unchanged.push('notifications');
    } else if (targets.applyNotifications) {
      const applyNotifications = targets.applyNotifications;
      if (await attempt('notifications', async () => applyNotifications(profile))) {
        listFor(summary, diff.notifications).push('notifications');
      }
    }

    if (diff.extensions === 'unchanged') {
      if (profile.extensions) summary.unchanged.push('extensions');
    } else if (await attempt('extensions', () => targets.restartExtensions(profile, problems))) {
      listFor(summary, diff.extensions).push('extensions');
    }

    for (const { section, changes, manager } of publisherKinds) {
      // One loop for both kinds: a publisher is a name, collections and the manager's put/remove.
      const put = manager.put.bind(manager) as (config: unknown) => Promise<unknown>;
      for (const change of changes as readonly EntryChange<WebhookConfig | MqttConfig>[]) {
        const config = change.after;
        if (config === undefined) continue;
        const id = `${section}/${config.name}`;
        if (change.kind === 'added' || change.kind === 'changed') {
          if (await attempt(id, () => put(config))) listFor(summary, change.kind).push(id);
        } else if (
          licenseChanged ||
          config.collections.some((name) => collectionsAddedOrRemoved.has(name))
        ) {
          // Its run conditions changed: start it afresh, as at daemon start.
          await manager.remove(config.name);
          if (await attempt(id, () => put(config))) summary.restarted.push(id);
        } else {
          summary.unchanged.push(id);
        }
      }
    }
    return summary;
  }

  private async applyDriver(
    name: string,
    kind: ProfileDiff['history'],
    config: DriverConfig | undefined,
    profile: Profile,
    problems: readonly StartupProblem[],
    summary: ReloadSummary,
  ): Promise<void> {
    const { drivers } = this.options.targets;
    const id = `drivers/${name}`;
    const running = drivers.get(name) !== undefined;
    if (config === undefined) {
      await drivers.stop(name);
      summary.stopped.push(id);
      return;
    }
    // An unchanged driver that is not running (left out at start for a file the operator has
    // since fixed, or for want of a license since installed) gets another chance: a reload is
    // how the fix is applied. A running one the license in force no longer allows stops.
    const allowed = drivers.licenseBlocker(config) === undefined;
    if (kind === 'unchanged' && ((running && allowed) || !config.enabled)) {
      summary.unchanged.push(id);
      return;
    }
    const index = profile.drivers.findIndex((driver) => driver.name === name);
    const fileProblems = problems.filter((problem) => problem.driver === index);
    if (fileProblems.length > 0) {
      await drivers.leaveOut(config, fileProblems);
      const message = fileProblems.map((problem) => `${problem.path}: ${problem.message}`);
      this.options.logger.error(
        { component: name, driver: config.type, problems: fileProblems },
        `driver left out: ${message.join(' ')}`,
      );
      summary.failed.push({ component: id, message: message.join(' ') });
      return;
    }
    const outcome = await drivers.start(config);
    if (!outcome.ok) summary.failed.push({ component: id, message: outcome.message });
    else if (outcome.driver === undefined) (running ? summary.stopped : summary.unchanged).push(id);
    else (kind === 'added' || !running ? summary.started : summary.restarted).push(id);
  }

  private logSummary(source: ReloadSource, summary: ReloadSummary, message: string): void {
    const { logger } = this.options;
    logger.info({ source, ...summary }, message);
    if (summary.requiresRestart.length > 0) {
      logger.warn(
        { requiresRestart: summary.requiresRestart },
        `restart required: ${summary.requiresRestart.join(', ')} changed, and takes effect at the next restart of tagd (systemctl restart tagd)`,
      );
    }
  }

  private emit(event: Parameters<ReloadListener>[0]): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.options.logger.error({ err: error }, 'reload listener failed');
      }
    }
  }
}

function listFor(summary: ReloadSummary, kind: ProfileDiff['history']): string[] {
  if (kind === 'added') return summary.started;
  if (kind === 'removed') return summary.stopped;
  return summary.restarted;
}
