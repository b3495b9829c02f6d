/**
 * What the assistant's tools read: the services the REST routes read, declared here so the API
 * (which serves the tools over MCP and the chat) depends on the assistant and not the reverse.
 * The API's own deps satisfy it.
 */
import type { Logger } from 'pino';
import type { AlarmService } from '../alarms/alarm-service.js';
import type { AccountService } from '../auth/account-service.js';
import type { Clock } from '../clock.js';
import type { HistoryService } from '../history/history-service.js';
import type { LicenseState } from '../license/license.js';
import type { ProfileService } from '../profile/profile-service.js';
import type { MqttPublisherState } from '../publishers/mqtt/mqtt-publisher.js';
import type { MqttConfig } from '../publishers/mqtt/schema.js';
import type { PublisherManager } from '../publishers/publisher.js';
import type { WebhookConfig } from '../publishers/webhook/schema.js';
import type { DerivedTagReport } from '../runtime/derived-tag-report.js';
import type { DriverReports } from '../runtime/driver-reports.js';
import type { DbcSignalCatalog } from '../tags/dbc-signal-catalog.js';
import type { TagStore } from '../tags/tag-store.js';
import type { TagWriter } from '../tags/tag-writer.js';
import type { ProposalService } from './proposal-service.js';

/** The services the tools call (each optional one absent: its tools say it is not there). */
export interface AssistantDeps {
  store: TagStore;
  /** Tokens are checked again at each call: a revoked token's session calls nothing more. */
  accounts: Pick<AccountService, 'stillValid'>;
  /** The audit log: one line per tool call. */
  audit: Logger;
  /** For failures of a tool itself (a bug, logged with its stack; the caller sees none). */
  logger: Logger;
  /** Epoch ms now. Default Date.now. */
  now?: () => number;
  /** Timers of the audit's summary windows (tool-call-audit.ts). Default: the system clock. */
  clock?: Clock;
  /** Which tags may be written, for browse answers; proposals confirm through it. */
  writer?: TagWriter;
  drivers?: DriverReports;
  derivedTags?: { list(): DerivedTagReport[] };
  dbc?: DbcSignalCatalog;
  history?: HistoryService;
  alarms?: AlarmService;
  /** The profile in force: publishers' configurations (masked on the way out). */
  profile?: ProfileService;
  publishers?: PublisherManager<WebhookConfig>;
  mqttPublishers?: PublisherManager<MqttConfig, MqttPublisherState>;
  license?: () => LicenseState;
  /** Where proposals are recorded. Absent: proposeWrite and proposeAcknowledge answer 503. */
  proposals?: ProposalService;
}
