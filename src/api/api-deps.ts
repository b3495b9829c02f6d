import type { Logger } from 'pino';
import type { AlarmService } from '../alarms/alarm-service.js';
import type { ChatStreamTiming } from '../assistant/chat/chat-heartbeat.js';
import type { ConversationStore } from '../assistant/chat/conversation-store.js';
import type { ProposalService } from '../assistant/proposal-service.js';
import type { AssistantToolRegistry } from '../assistant/tool-registry.js';
import type { AccountService } from '../auth/account-service.js';
import type { UserManagement } from '../auth/user-management.js';
import type { Clock } from '../clock.js';
import type { ConsoleBundle } from '../console/console-bundle.js';
import type { HistoryService } from '../history/history-service.js';
import type { LicenseState } from '../license/license.js';
import type { ProfileService } from '../profile/profile-service.js';
import type { ProfileProblems } from '../profile-problems.js';
import type { MqttPublisherState } from '../publishers/mqtt/mqtt-publisher.js';
import type { MqttConfig } from '../publishers/mqtt/schema.js';
import type { PublisherManager } from '../publishers/publisher.js';
import type { WebhookConfig } from '../publishers/webhook/schema.js';
import type { RecentEvents } from '../recent-events.js';
import type { ProfileReloader } from '../reload/profile-reloader.js';
import type { DerivedTagReport } from '../runtime/derived-tag-report.js';
import type { DriverReports } from '../runtime/driver-reports.js';
import type { RelayDriverSummary, RelayNodeReport } from '../runtime/relay-report.js';
import type { Collections } from '../tags/collections.js';
import type { DbcSignalCatalog } from '../tags/dbc-signal-catalog.js';
import type { TagStore } from '../tags/tag-store.js';
import type { TagWriter } from '../tags/tag-writer.js';
import type { StateDirGuard } from './state-dir-guard.js';
import type { TagStreamHub } from './tag-stream/tag-stream-hub.js';

/** A listener of the daemon (`GET /api/v2/Status`). */
export interface ListenerReport {
  /** `http`, `https`, `extensions-http`, `extensions-https`. */
  name: string;
  /** Where it listens, e.g. `http://127.0.0.1:8080`. */
  url: string;
}

/** What the API reports to the metrics and serves from them (`GET /metrics`). */
export interface ApiMetrics {
  /**
   * A request was answered.
   * @param route the matched route's template (`/api/v2/Tags/Sample/{fullTagPath}`), or
   *   `(unmatched)`: never the request path, so tag paths and names make no series.
   * @param seconds from the request reaching the app to its answer being set.
   */
  requestEnded(route: string, method: string, status: number, seconds: number): void;
  /** Every series now, in the Prometheus text format. */
  exposition(): Promise<{ contentType: string; body: string }>;
  /**
   * Whether a peer on loopback may read `/metrics` without a token, asked per request (the
   * profile's `server.metrics.allowLoopbackWithoutToken`, default true).
   */
  allowLoopbackWithoutToken(): boolean;
}

/** The running derived tags, as the DerivedTags routes read them. */
export interface DerivedTagsView {
  /** Every derived tag of every running derived-tag driver, in profile order. */
  list(): DerivedTagReport[];
}

/** The relay drivers and their edge nodes, as the Relay routes read them. */
export interface RelayView {
  list(): RelayDriverSummary[];
  /** The nodes of a relay driver; undefined when no relay driver has that name. */
  nodes(driver: string): RelayNodeReport[] | undefined;
}

/** What the API reads and writes. */
export interface ApiDeps {
  store: TagStore;
  logger: Logger;
  /** tagd's version, for the liveness answer. */
  version: string;
  accounts: AccountService;
  /** Audit log for configuration changes made through the API. */
  audit: Logger;
  /** Epoch ms now. Default Date.now. */
  now?: () => number;
  /** Timers of the assistant audit's summary windows (tool-call-audit.ts). Default: the system clock. */
  clock?: Clock;
  /**
   * The DBC definitions of the CAN components, filled by the CAN drivers. Default: an empty
   * catalog, so every DBC request answers 404 (no CAN component exists).
   */
  dbc?: DbcSignalCatalog;
  /**
   * The profile in force, through which the publisher and collection routes save their
   * changes (atomically, secrets sealed). Absent: those routes answer 500 (a wiring error),
   * after the license check of the publisher routes.
   */
  profile?: ProfileService;
  /** The running collections, updated when a collection is created, replaced or deleted. */
  collections?: Collections;
  /** The running webhook publishers, following every change made through the API. */
  publishers?: PublisherManager<WebhookConfig>;
  /** The running MQTT publishers, following every change made through the API. */
  mqttPublishers?: PublisherManager<MqttConfig, MqttPublisherState>;
  /**
   * The license in force, read on every publisher and relay request and on every change of a
   * relay driver. Default: unlicensed, so every publisher and relay route, and adding or
   * replacing a relay driver, answers 403 `feature-unavailable`.
   */
  license?: () => LicenseState;
  /**
   * The history store read by Logged query bindings. Absent: Logged bindings answer 409
   * `history-not-configured`.
   */
  history?: HistoryService;
  /**
   * The built browser console served at `/`. Absent: `/` answers 404 saying the console is not
   * built (running from source without `npm run build`).
   */
  console?: ConsoleBundle;
  /**
   * The running drivers' states and counters for the Drivers routes. Absent: no driver is
   * listed (and every `Drivers/{name}` answers 404).
   */
  drivers?: DriverReports;
  /** The running derived tags, for the DerivedTags routes. Absent: none is listed. */
  derivedTags?: DerivedTagsView;
  /** The relay drivers, for the Relay routes. Absent: none is listed (every Nodes is 404). */
  relay?: RelayView;
  /**
   * The open tag streams, with their caps and timings. Absent: the API makes its own with the
   * defaults (then nothing closes the streams before the listeners at a stop).
   */
  streams?: TagStreamHub;
  /**
   * Account administration for the Users management routes (shared with `tagd users`).
   * Absent: those routes answer 500 (a wiring error).
   */
  userManagement?: UserManagement;
  /**
   * Applies profile changes to the running daemon: the Profile/Reload route and the Drivers
   * routes that add, replace or remove a driver. Absent: those routes answer 500 (a wiring error).
   */
  reloader?: ProfileReloader;
  /**
   * The local status token (`<state>/status.key`) that `GET /api/v2/Status` accepts. Absent:
   * that route refuses every request (401).
   */
  statusToken?: string;
  /** Where the daemon listens, for the status. Absent: no listener is listed. */
  listeners?: () => ListenerReport[];
  /**
   * Routes tag writes to the drivers (filled as drivers start). Default: a writer with no
   * drivers, so every write is refused as not writable.
   */
  writer?: TagWriter;
  /**
   * Request counts and durations, and the series `GET /metrics` serves. Absent: requests are not
   * measured and `/metrics` answers 404 `not-found`.
   */
  metrics?: ApiMetrics;
  /**
   * The running alarms, for the Alerts routes. Absent: those routes answer 500 (a wiring error).
   */
  alarms?: AlarmService;
  /**
   * The state directory and the profile's folder, for the Drivers routes: a driver entry sent
   * over the API may not name a file in the state directory. Absent: no such check.
   */
  stateDirGuard?: StateDirGuard;
  /**
   * Lists every problem of a profile document as `tagd profile check` does (the daemon's key,
   * profile folder and listener overrides), for `POST /api/v2/Profile/Check`. Absent: that
   * route answers 500 (a wiring error).
   */
  checkProfile?: (document: unknown) => Promise<ProfileProblems>;
  /** The recent audit lines, warnings and errors, for `GET /api/v2/Events`. Absent: none. */
  recentEvents?: RecentEvents;
  /**
   * The assistants' proposals (src/assistant/proposal-service.ts), for the Assistant/Proposals
   * routes and the proposal tools. Absent: those routes answer 500 (a wiring error) and the
   * proposal tools are not offered.
   */
  proposals?: ProposalService;
  /**
   * The assistants' tool registry, served by the MCP server and the chat. Absent: the API builds
   * one on these deps.
   */
  assistantTools?: AssistantToolRegistry;
  /**
   * The chat's conversations (src/assistant/chat/conversation-store.ts), in the state
   * directory. Absent: the Assistant/Conversations routes answer 500 (a wiring error).
   */
  conversations?: ConversationStore;
  /**
   * The clock and interval of the chat answers' heartbeat comments. Default: the system clock,
   * every 15 s (src/assistant/chat/chat-heartbeat.ts).
   */
  chatStream?: ChatStreamTiming;
}
