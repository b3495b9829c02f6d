import type { Logger } from 'pino';
import type { AccountService } from '../auth/account-service.js';
import type { DbcSignalCatalog } from '../dbc/signal-catalog.js';
import type { HistoryService } from '../history/history-service.js';
import type { LicenseState } from '../license/license.js';
import type { ProfileService } from '../profile/profile-service.js';
import type { PublisherManager } from '../publishers/publisher.js';
import type { WebhookConfig } from '../publishers/webhook/schema.js';
import type { Collections } from '../tags/collections.js';
import type { TagStore } from '../tags/tag-store.js';
import type { TagWriter } from '../tags/tag-writer.js';

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
  /**
   * The license in force, read on every publisher request. Default: unlicensed, so every
   * publisher route answers 403 `feature-unavailable`.
   */
  license?: () => LicenseState;
  /**
   * The history store read by Logged query bindings. Absent: Logged bindings answer 409
   * `history-not-configured`.
   */
  history?: HistoryService;
  /**
   * Routes tag writes to the drivers (filled as drivers start). Default: a writer with no
   * drivers, so every write is refused as not writable.
   */
  writer?: TagWriter;
}
