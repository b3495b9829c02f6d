import type { KeyObject } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { isDerivedTagSource } from '../drivers/derived/derived-tag-report.js';
import { derivedReferenceWarnings } from '../drivers/derived/profile-references.js';
import { AlarmJournal } from './alarms/alarm-journal.js';
import { alarmReferenceWarnings } from './alarms/alarm-references.js';
import { AlarmService, alarmJournalFile } from './alarms/alarm-service.js';
import type { ListenerReport } from './api/api-deps.js';
import { apiRoutes, createApp } from './api/app.js';
import { HttpListener } from './api/http-listener.js';
import { HttpsListener } from './api/https-listener.js';
import { TagStreamHub } from './api/tag-stream/tag-stream-hub.js';
import { ConversationStore } from './assistant/chat/conversation-store.js';
import { ProposalService } from './assistant/proposal-service.js';
import { AssistantToolRegistry } from './assistant/tool-registry.js';
import { AccountService } from './auth/account-service.js';
import { defaultSignInLimits, SignInLimiter } from './auth/sign-in-limiter.js';
import { defaultLifetimes, TokenService } from './auth/token-service.js';
import { UserManagement } from './auth/user-management.js';
import { UserStore } from './auth/user-store.js';
import { type Clock, systemClock } from './clock.js';
import { type ConsoleBundle, loadConsoleBundle } from './console/console-bundle.js';
import { defaultConsoleDir } from './console/console-manifest.js';
import { ProfileInvalidError } from './errors.js';
import { ExtensionsServer, type ExtensionsServerOptions } from './extensions/extensions-server.js';
import { createHistoryBackend, HistoryService } from './history/history-service.js';
import { type LicenseState, loadLicense, unlicensed, vendorPublicKey } from './license/license.js';
import { TagdMetrics } from './metrics/tagd-metrics.js';
import { EmailNotifier } from './notifications/email-notifier.js';
import { packageRoot } from './package-root.js';
import { ProfileService } from './profile/profile-service.js';
import { ProfileStore } from './profile/profile-store.js';
import type { Profile } from './profile/schema.js';
import { SecretBox } from './profile/secret-box.js';
import { listProfileProblems } from './profile-problems.js';
import { MqttPublishers } from './publishers/mqtt/mqtt-publishers.js';
import { WebhookPublishers } from './publishers/webhook/webhook-publishers.js';
import { RecentEvents } from './recent-events.js';
import {
  ProfileReloader,
  type ReloadListener,
  type ReloadSource,
  type ReloadSummary,
} from './reload/profile-reloader.js';
import { DriverReports } from './runtime/driver-reports.js';
import { RelayReports } from './runtime/relay-reports.js';
import { RunningDrivers } from './runtime/running-drivers.js';
import { checkStartup, type StartupCheckOptions, type StartupProblem } from './startup-checks.js';
import { StateDirLock } from './state/state-dir-lock.js';
import { loadOrCreateStatusToken, writeStatusEndpoint } from './state/status-access.js';
import { removeLeftoverTempFiles } from './state/temp-files.js';
import { Collections } from './tags/collections.js';
import { DbcSignalCatalog } from './tags/dbc-signal-catalog.js';
import { TagStore } from './tags/tag-store.js';
import { TagWriter } from './tags/tag-writer.js';
import { version } from './version.js';

/** Where the daemon finds its profile and state, and what it may override. */
export interface DaemonOptions {
  /** Path of the profile JSON file. */
  profileFile: string;
  /** State directory: keys, users, history. Created 0700 if missing. */
  stateDir: string;
  logger: Logger;
  /** Overrides the profile's loopback HTTP listener (`--listen`); HTTPS keeps the profile's. */
  listen?: { host: string; port: number };
  /**
   * Overrides the host and port of the extensions server's HTTP listener
   * (`--extensions-listen`); without an `extensions` section in the profile it does nothing.
   */
  extensionsListen?: { host: string; port: number };
  /** systemd's `$CREDENTIALS_DIRECTORY`, where the sealing key may come from. */
  credentialsDir?: string;
  /** Time source. Default: the system clock. */
  clock?: Clock;
  /**
   * Public keys whose signature on the license file is accepted. Default: the vendor's key
   * (tests sign licenses with a key pair of their own and pass its public key).
   */
  licenseKeys?: KeyObject[];
  /**
   * Folder of the built console (build-console.ts). Default: `dist/console` in the package.
   * Without a build there, `/` answers 404 and the rest runs as usual.
   */
  consoleDir?: string;
  /**
   * The rings of recent audit lines, warnings and errors the logger tees into (createLogger's
   * `recentEvents`), served by `GET /api/v2/Events`. Default: an empty one (nothing logged
   * through this logger reaches it).
   */
  recentEvents?: RecentEvents;
}

interface Component {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The running gateway: loads the profile and the license, then starts the tag store,
 * collections, history (when the profile has it), drivers, the API listeners (loopback HTTP,
 * then HTTPS when the profile has it), the extensions server (when the profile has it), the
 * webhook and the MQTT publishers in that order, and stops them in reverse (publishers first).
 * {@link Daemon.reload} re-reads the profile and restarts only the parts that changed
 * (src/reload/), through the same start and stop. Constructing does nothing.
 */
export class Daemon {
  /** The tag store; available after start(). */
  store: TagStore | undefined;
  /** The profile as loaded; available after start(). */
  profile: Profile | undefined;
  /** The license in force; available after start(). */
  license: LicenseState | undefined;
  /** The history, when the profile has a history section; available after start(). */
  history: HistoryService | undefined;
  /** The metrics served at `/metrics`; available after start(). */
  metrics: TagdMetrics | undefined;
  /** The running alarms; available after start(). */
  alarms: AlarmService | undefined;
  private readonly started: Component[] = [];
  // The running drivers, by name in profile order, for the Drivers routes and reloads.
  private drivers: RunningDrivers | undefined;
  private reloader: ProfileReloader | undefined;
  private readonly reloadListeners = new Set<ReloadListener>();
  private listener: HttpListener | undefined;
  private httpsListener: HttpsListener | undefined;
  private extensions: ExtensionsServer | undefined;
  private lock: StateDirLock | undefined;

  constructor(private readonly options: DaemonOptions) {}

  /**
   * Starts everything. A driver that fails to load or start is logged and left out, so the
   * other equipment keeps being read; a profile or listener failure stops the start-up.
   * A problem the start-up checks (startup-checks.ts) find in the listeners is a
   * ProfileInvalidError listing every one; a driver whose files are unusable is left out.
   * @throws StateDirLockedError (another daemon runs on the state directory),
   *   ProfileNotFoundError, ProfileCorruptError, ProfileInvalidError, SecretKeyError,
   *   ListenerError — after stopping whatever had started.
   */
  async start(): Promise<void> {
    const { logger, stateDir } = this.options;
    const clock = this.options.clock ?? systemClock;
    const began = performance.now();
    try {
      // First: a second daemon on this state directory must not touch anything in it.
      const lock = new StateDirLock(stateDir);
      await lock.acquire();
      this.lock = lock;
      // Files the profile names are relative to it, not to wherever tagd was started from.
      const profileFolder = dirname(resolve(this.options.profileFile));
      await this.removeLeftovers(profileFolder);

      const secretBox = await SecretBox.open(stateDir, this.options.credentialsDir);
      const profileStore = new ProfileStore({
        file: this.options.profileFile,
        secretBox,
        logger: logger.child({ component: 'profile' }),
      });
      const profile = await profileStore.load();
      this.profile = profile;
      // 'files': the license and the DBC are read (and parsed) once, by their users below.
      const problems = await checkStartup(profile, this.checkOptions(profileFolder, clock));
      const refused = problems.filter((problem) => problem.effect === 'refused');
      if (refused.length > 0) {
        throw new ProfileInvalidError(
          this.options.profileFile,
          refused.map(({ path, message }) => ({ path, message })),
        );
      }
      this.license = await this.loadLicense(profile, profileFolder, clock);

      const store = new TagStore({ clock, logger: logger.child({ component: 'tags' }) });
      this.store = store;
      const metrics = new TagdMetrics({ version, now: () => clock.now() });
      this.metrics = metrics;
      metrics.watchStore(store);
      // Read at each scrape: a reload may start, replace or remove the history.
      metrics.watchHistory({ stats: () => this.history?.stats() });
      await this.startComponent({
        name: 'tags',
        start: () => store.start(),
        stop: () => store.stop(),
      });

      const collections = new Collections(
        store,
        profile.collections,
        logger.child({ component: 'collections' }),
      );
      await this.startComponent({
        name: 'collections',
        start: () => collections.start(),
        stop: () => collections.stop(),
      });

      // Before the drivers, so their first samples are logged; stopped after the API, so
      // the last batch is stored once nothing can write any more. Registered even without a
      // history section: a reload may add one, and it stops in this place then.
      const startHistory = async (config: Profile['history']) => {
        const history = config
          ? await this.createHistory(config, store, collections, clock)
          : undefined;
        await history?.start();
        // Only a started history is served: one that failed at a reload is reported, not read.
        this.history = history;
      };
      await this.startComponent({
        name: 'history',
        start: () => startHistory(profile.history),
        stop: async () => {
          const running = this.history;
          this.history = undefined;
          await running?.stop();
        },
      });

      // One catalog: CAN drivers register their DBC in it, the API's DBC route reads it.
      const dbc = new DbcSignalCatalog();
      // The way back to the devices: each driver's writable tags are routed once it started,
      // and unrouted before it stops (a reload's too), so no write reaches a stopping driver.
      const audit = logger.child({ component: 'audit' });
      const writer = new TagWriter({
        store,
        audit,
        logger: logger.child({ component: 'writes' }),
        now: () => clock.now(),
        writesPerSecond: profile.security.writesPerSecond,
        metrics: metrics.writes,
      });
      const drivers = new RunningDrivers({
        store,
        logger,
        // Asked at each start: the relay drivers run only with the data relay feature.
        license: () => this.license ?? unlicensed,
        shared: { clock, profileDir: profileFolder, dbc, stateDir },
        metrics: (name, type) => metrics.driver(name, type),
        hooks: {
          started: (driver) => writer.register(driver),
          stopping: (driver) => writer.unregister(driver),
        },
      });
      this.drivers = drivers;
      await this.startComponent({
        name: 'drivers',
        start: async () => {
          for (const [index, config] of profile.drivers.entries()) {
            const fileProblems = problems.filter((problem) => problem.driver === index);
            if (fileProblems.length > 0) {
              this.logDriverLeftOut(config.name, config.type, fileProblems);
              await drivers.leaveOut(config, fileProblems);
              continue;
            }
            await drivers.start(config);
          }
          drivers.arrange(profile.drivers.map((config) => config.name));
        },
        stop: () => drivers.stopAll(),
      });

      let inForce = (): Profile => profile;
      // After the drivers, so the sources exist (a state restored from the journal is shown
      // unconfirmed until its source is read); stopped before them, so drivers going away at a
      // stop raise no BadQuality alarm.
      const alarms = new AlarmService({
        store,
        clock,
        logger: logger.child({ component: 'alarms' }),
        journal: new AlarmJournal({
          file: alarmJournalFile(stateDir),
          checkpoints: { clock, logger: logger.child({ component: 'alarms' }) },
        }),
        definitions: profile.alarms,
        // The profile in force (an API edit or a reload may change it), once the service exists.
        retentionDays: () => inForce().alarmJournal?.retentionDays,
      });
      this.alarms = alarms;
      // E-mail of alarms: follows the alarms' transitions; its failures never stop anything.
      // Before the alarms, so an alarm that trips at their start is heard too.
      const notifier = new EmailNotifier({ alarms, clock, logger, store });
      metrics.watchNotifications(notifier);
      await this.startComponent({
        name: 'notifications',
        start: async () => notifier.apply(inForce().notifications),
        stop: async () => notifier.stop(),
      });
      await this.startComponent({
        name: 'alarms',
        start: () => alarms.start(),
        stop: () => alarms.stop(),
      });

      const now = () => clock.now();
      const users = new UserStore({
        stateDir,
        watch: true,
        logger: logger.child({ component: 'users' }),
        now,
      });
      await this.startComponent({
        name: 'users',
        start: () => users.start(),
        stop: () => users.stop(),
      });
      const tokens = await TokenService.open(
        stateDir,
        {
          ...defaultLifetimes,
          access: profile.security.accessTokenMinutes * 60,
          refresh: profile.security.refreshTokenDays * 86_400,
          session: profile.security.sessionLifetimeHours * 3600,
        },
        now,
      );
      const accounts = new AccountService({
        users,
        tokens,
        limiter: new SignInLimiter(now, defaultSignInLimits, metrics.signIn),
        secretBox,
        audit,
        now,
        stateDir,
      });
      await accounts.createInitialAdmin(stateDir, logger);

      // One ProfileStore: the API saves through the instance that loaded the profile.
      const profileService = new ProfileService(profileStore, profile, audit);
      inForce = () => profileService.current();
      const publishers: WebhookPublishers = new WebhookPublishers({
        store,
        collections,
        clock,
        logger,
        license: () => this.license ?? unlicensed,
        version,
        // A relative caFile is resolved like the HTTPS certificate files: from the profile's folder.
        baseDir: profileFolder,
        stateDir,
        alarms,
        metrics: metrics.publisherKind('webhook', (): WebhookPublishers => publishers),
      });

      const mqttPublishers: MqttPublishers = new MqttPublishers({
        store,
        collections,
        clock,
        logger,
        license: () => this.license ?? unlicensed,
        baseDir: profileFolder,
        stateDir,
        alarms,
        metrics: metrics.publisherKind('mqtt', (): MqttPublishers => mqttPublishers),
        // Sparkplug DCMD writes (acceptWrites) take the path and checks of the REST writes.
        writer,
      });

      const consoleBundle = await this.loadConsole();
      const driverReports = new DriverReports({
        drivers: () => drivers.list(),
        store,
        clock,
      });
      metrics.watchDrivers(driverReports);
      await this.startComponent({
        name: 'driver-reports',
        start: () => driverReports.start(),
        stop: () => driverReports.stop(),
      });
      const streams = new TagStreamHub({
        store,
        accounts,
        clock,
        logger: logger.child({ component: 'api' }),
      });
      const userManagement = new UserManagement({
        users,
        tokens: async () => tokens,
        audit,
        secretBox: async () => secretBox,
      });

      const reloader = new ProfileReloader({
        store: profileStore,
        profile: profileService,
        logger: logger.child({ component: 'reload' }),
        targets: {
          reloadLicense: async (next) => {
            const before = this.license;
            this.license = await this.loadLicense(next, profileFolder, clock);
            return !sameGrant(before, this.license);
          },
          collections,
          restartHistory: async (next) => {
            const running = this.history;
            this.history = undefined;
            await running?.stop();
            await startHistory(next.history);
          },
          drivers,
          restartExtensions: async (next, nextProblems) => {
            const running = this.extensions;
            this.extensions = undefined;
            await running?.stop();
            await startExtensions(next, nextProblems);
          },
          publishers,
          mqttPublishers,
          applyAlarms: (next) => alarms.apply(next.alarms),
          applyNotifications: (next) => notifier.apply(next.notifications),
          check: (next) => checkStartup(next, this.checkOptions(profileFolder, clock)),
        },
      });
      reloader.onReload((event) => {
        for (const listener of this.reloadListeners) listener(event);
      });
      this.reloader = reloader;

      const http = { ...profile.server.http, ...this.options.listen };
      const daemon = this;
      // For `tagd status` (GET /api/v2/Status), which reads it from the state directory.
      const statusToken = await loadOrCreateStatusToken(stateDir);
      // What assistants propose (never write) waits here for a person, across restarts.
      const proposals = await ProposalService.open({
        stateDir,
        now,
        audit,
        logger: logger.child({ component: 'assistant' }),
        config: () => profileService.current().assistant,
        writer,
        alarms,
      });
      // The chat's conversations, each visible to its own account only.
      const conversations = await ConversationStore.open({
        stateDir,
        now,
        logger: logger.child({ component: 'assistant' }),
      });
      const apiDeps = {
        store,
        logger,
        version,
        accounts,
        audit,
        now,
        clock,
        profile: profileService,
        collections,
        publishers,
        mqttPublishers,
        license: () => this.license ?? unlicensed,
        dbc,
        drivers: driverReports,
        relay: new RelayReports({ drivers: () => drivers.list(), reports: driverReports }),
        derivedTags: {
          list: () =>
            drivers
              .list()
              .filter(isDerivedTagSource)
              .flatMap((d) => d.derivedTags()),
        },
        streams,
        userManagement,
        writer,
        reloader,
        alarms,
        metrics: metrics.api(
          () => profileService.current().server.metrics.allowLoopbackWithoutToken,
        ),
        // Read per request: a reload may start, replace or remove the history.
        get history() {
          return daemon.history;
        },
        statusToken,
        listeners: () => this.listenerReports(),
        stateDirGuard: { stateDir, profileDir: profileFolder },
        recentEvents: this.options.recentEvents ?? new RecentEvents(),
        checkProfile: (document: unknown) =>
          listProfileProblems(document, {
            ...this.checkOptions(profileFolder, clock),
            depth: 'full',
            secretBox,
            referenceWarnings: (next) => [
              ...derivedReferenceWarnings(next),
              ...alarmReferenceWarnings(next),
            ],
          }),
        proposals,
        conversations,
        // The chat answers' heartbeats run on the daemon's clock.
        chatStream: { clock },
        // Set below: the registry reads these deps.
        assistantTools: undefined as AssistantToolRegistry | undefined,
        ...(consoleBundle ? { console: consoleBundle } : {}),
      };
      // One tool registry for both listeners and the extensions server (an account's calls in
      // flight count across all). Registered before the listeners, so it stops after them: the
      // audit's pending summary lines are written once no call can come.
      const assistantTools = new AssistantToolRegistry(apiDeps);
      apiDeps.assistantTools = assistantTools;
      await this.startComponent({
        name: 'assistant-audit',
        start: async () => undefined,
        stop: async () => assistantTools.flushAudit(),
      });
      // One route list for the main app and the extensions server: the routes hold state (query
      // sets and their admission limits, the tag stream hub when deps has none) both must share.
      const routes = apiRoutes(apiDeps);
      const app = createApp(apiDeps, { routes });
      // One request handler for both listeners: callback() composes the middleware anew.
      const handler = app.callback();
      const listener = new HttpListener({
        ...http,
        handler,
        logger: logger.child({ component: 'http' }),
      });
      this.listener = listener;
      await this.startComponent({
        name: 'http',
        start: () => listener.start(),
        stop: () => listener.stop(),
      });
      if (profile.server.https) {
        const { certFile, keyFile, ...https } = profile.server.https;
        const httpsListener = new HttpsListener({
          ...https,
          certFile: resolve(profileFolder, certFile),
          keyFile: resolve(profileFolder, keyFile),
          handler,
          logger: logger.child({ component: 'https' }),
          now,
        });
        this.httpsListener = httpsListener;
        await this.startComponent({
          name: 'https',
          start: () => httpsListener.start(),
          stop: () => httpsListener.stop(),
        });
      }

      // Registered even without an extensions section: a reload may add one.
      const startExtensions = async (next: Profile, nextProblems: readonly StartupProblem[]) => {
        if (!next.extensions) return;
        const extensions = this.createExtensions(next, nextProblems, profileFolder, {
          deps: apiDeps,
          routes,
          now,
        });
        await extensions.start();
        this.extensions = extensions;
      };
      await this.startComponent({
        name: 'extensions',
        start: () => startExtensions(profile, problems),
        stop: async () => {
          const running = this.extensions;
          this.extensions = undefined;
          await running?.stop();
        },
      });

      // Stopped before the listeners (the extensions server's too): open tag streams never end
      // by themselves, and the listeners would wait out their drain time for them.
      await this.startComponent({
        name: 'tag-streams',
        start: async () => undefined,
        stop: async () => streams.closeAll(),
      });

      // Last to start, first to stop: no delivery is in flight while anything it reads stops.
      // The profile in force, not as loaded: the API is already listening and may have changed it.
      await this.startComponent({
        name: 'publishers',
        start: () => publishers.startAll(profileService.current().publishers.webhooks),
        stop: () => publishers.stopAll(),
      });
      await this.startComponent({
        name: 'mqtt publishers',
        start: () => mqttPublishers.startAll(profileService.current().publishers.mqtt),
        stop: () => mqttPublishers.stopAll(),
      });

      reloader.accept();
      const url = listener.url();
      if (url !== undefined) await writeStatusEndpoint(stateDir, url);
      logger.info(
        {
          version,
          url,
          ...(this.httpsListener ? { httpsUrl: this.httpsListener.url() } : {}),
          ...(this.extensions ? { extensionsUrl: this.extensions.url() } : {}),
          ...(this.extensions?.httpsUrl()
            ? { extensionsHttpsUrl: this.extensions.httpsUrl() }
            : {}),
          tags: store.size,
          drivers: profile.drivers.length,
          startupMs: Math.round(performance.now() - began),
        },
        'tagd ready',
      );
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /**
   * Stops every started component in reverse order; a failing stop is logged, not fatal. The
   * state directory lock goes last, once nothing writes there any more.
   */
  async stop(): Promise<void> {
    await this.reloader?.close();
    while (this.started.length > 0) {
      const component = this.started.pop() as Component;
      try {
        await component.stop();
      } catch (error) {
        this.options.logger.error({ err: error, component: component.name }, 'stop failed');
      }
    }
    const lock = this.lock;
    this.lock = undefined;
    await lock?.release();
  }

  // Temporary files a crash left mid-save: in the state directory (users.json, keys), and the
  // profile's own beside it (the rest of the profile's folder is the operator's).
  private async removeLeftovers(profileFolder: string): Promise<void> {
    const profilePrefix = `.${basename(this.options.profileFile)}.`;
    const removed = [
      ...(await removeLeftoverTempFiles(this.options.stateDir)).map((name) =>
        join(this.options.stateDir, name),
      ),
      ...(
        await removeLeftoverTempFiles(profileFolder, (name) => name.startsWith(profilePrefix))
      ).map((name) => join(profileFolder, name)),
    ];
    if (removed.length > 0) {
      this.options.logger.warn({ files: removed }, 'removed temporary files left by a crash');
    }
  }

  // Where the daemon listens now, for GET /api/v2/Status.
  private listenerReports(): ListenerReport[] {
    const reports: ListenerReport[] = [];
    const add = (name: string, url: string | undefined) => {
      if (url !== undefined) reports.push({ name, url });
    };
    add('http', this.listener?.url());
    add('https', this.httpsListener?.url());
    add('extensions-http', this.extensions?.url());
    add('extensions-https', this.extensions?.httpsUrl());
    return reports;
  }

  /** URL of the HTTP listener while running. */
  url(): string | undefined {
    return this.listener?.url();
  }

  /** URL of the HTTPS listener while running; undefined when the profile has none. */
  httpsUrl(): string | undefined {
    return this.httpsListener?.url();
  }

  /** URL of the extensions server's HTTP listener while running; undefined without one. */
  extensionsUrl(): string | undefined {
    return this.extensions?.url();
  }

  /** URL of the extensions server's HTTPS listener while running; undefined without one. */
  extensionsHttpsUrl(): string | undefined {
    return this.extensions?.httpsUrl();
  }

  // The console is a convenience: a missing or damaged build is logged, and the gateway goes on
  // reading and delivering without it (`/` then answers 404 saying so).
  private async loadConsole(): Promise<ConsoleBundle | undefined> {
    const logger = this.options.logger.child({ component: 'console' });
    const consoleDir = this.options.consoleDir ?? join(packageRoot, defaultConsoleDir);
    try {
      const bundle = await loadConsoleBundle(consoleDir);
      if (!bundle) {
        logger.info({ consoleDir }, 'no console build found: run `npm run build` to serve it at /');
      }
      return bundle;
    } catch (error) {
      logger.error({ err: error, consoleDir }, 'console build unreadable: serving no console');
      return undefined;
    }
  }

  // The license decides licensed features only: a missing or refused one never stops start-up.
  private async loadLicense(
    profile: Profile,
    profileFolder: string,
    clock: Clock,
  ): Promise<LicenseState> {
    const logger = this.options.logger.child({ component: 'license' });
    const file = profile.license ? resolve(profileFolder, profile.license.file) : undefined;
    const license = await loadLicense(
      file,
      this.options.licenseKeys ?? [vendorPublicKey],
      clock.now(),
    );
    if (license.edition !== 'unlicensed') {
      logger.info(
        {
          edition: license.edition,
          licensee: license.licensee,
          expires: license.expires ?? null,
          features: [...license.features],
        },
        `licensed: ${license.edition} edition for ${license.licensee}`,
      );
    } else if (license.problem !== undefined) {
      logger.warn(
        { problem: license.problem },
        `license refused: ${license.problem} Licensed features (data relay) are unavailable.`,
      );
    } else {
      logger.info('no license in the profile: licensed features (data relay) are unavailable');
    }
    return license;
  }

  /**
   * Re-reads the profile file and restarts only the components whose configuration changed
   * (see ProfileReloader); the API keeps answering throughout.
   * @param source who asked, for the log and the {@link onReload} listeners.
   * @throws ProfileInvalidError listing every error (the running configuration stays), or an
   *   Error when the daemon is not running.
   */
  reload(source: ReloadSource): Promise<ReloadSummary> {
    if (!this.reloader) return Promise.reject(new Error('tagd is not running.'));
    return this.reloader.reload(source);
  }

  /**
   * Subscribes to reloads of the profile file (SIGHUP, the Profile/Reload route, `tagd profile
   * import`): `start` before anything is read, `end` with the summary or the error. May be
   * called before start(). This is the hook for systemd's `RELOADING=1` / `READY=1`.
   * @returns the function that unsubscribes.
   */
  onReload(listener: ReloadListener): () => void {
    this.reloadListeners.add(listener);
    return () => this.reloadListeners.delete(listener);
  }

  // The start-up checks as `tagd start` runs them, at start and again at each reload.
  private checkOptions(profileFolder: string, clock: Clock): StartupCheckOptions {
    return {
      depth: 'files',
      profileFolder,
      ...(this.options.listen ? { listen: this.options.listen } : {}),
      ...(this.options.extensionsListen ? { extensionsListen: this.options.extensionsListen } : {}),
      ...(this.options.licenseKeys ? { licenseKeys: this.options.licenseKeys } : {}),
      now: clock.now(),
    };
  }

  private logDriverLeftOut(name: string, type: string, problems: readonly StartupProblem[]): void {
    this.options.logger.error(
      { component: name, driver: type, problems },
      `driver left out: ${problems.map((problem) => problem.message).join(' ')}`,
    );
  }

  private async createHistory(
    config: NonNullable<Profile['history']>,
    store: TagStore,
    collections: Collections,
    clock: Clock,
  ): Promise<HistoryService> {
    const logger = this.options.logger.child({ component: 'history' });
    const backend = await createHistoryBackend(config, {
      stateDir: this.options.stateDir,
      clock,
      logger,
    });
    return new HistoryService({ backend, store, collections, config, clock, logger });
  }

  // Apps whose folder a start-up check refused are left out; the others are served.
  private createExtensions(
    profile: Profile,
    problems: readonly StartupProblem[],
    profileFolder: string,
    api: Pick<ExtensionsServerOptions, 'deps' | 'routes' | 'now'>,
  ): ExtensionsServer {
    const config = profile.extensions as NonNullable<Profile['extensions']>;
    const logger = this.options.logger;
    const leftOut = new Set(
      problems.flatMap((problem) => (problem.app === undefined ? [] : [problem.app])),
    );
    for (const problem of problems.filter((found) => found.app !== undefined)) {
      logger.error(
        { component: 'extensions', path: problem.path },
        `app left out: ${problem.message}`,
      );
    }
    return new ExtensionsServer({
      config: { ...config, apps: config.apps.filter((_app, index) => !leftOut.has(index)) },
      profileFolder,
      ...api,
      logger: logger.child({ component: 'extensions' }),
      ...(this.options.extensionsListen ? { listen: this.options.extensionsListen } : {}),
    });
  }

  private async startComponent(component: Component): Promise<void> {
    await component.start();
    this.started.push(component);
  }
}

// Whether two licenses grant the same: a reload that re-reads an unchanged file restarts nothing.
function sameGrant(before: LicenseState | undefined, after: LicenseState): boolean {
  if (before === undefined) return false;
  return (
    before.edition === after.edition &&
    before.licensee === after.licensee &&
    before.expires === after.expires &&
    [...before.features].sort().join() === [...after.features].sort().join()
  );
}
