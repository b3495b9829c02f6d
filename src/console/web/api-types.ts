/**
 * The shapes of the public /api/v2 that the console reads, written from the OpenAPI document
 * (the console is an API client like any other, so it imports nothing from the server).
 */

/** Tag quality (spec §2.3). */
export type Quality = 'Good' | 'Stale' | 'Unavailable' | 'Bad';

/** A tag sample as `Tags/Sample` and `Tags/Stream` answer it. */
export interface Sample {
  fullTagId: string;
  utcTimestamp: string;
  quality: Quality;
  value?: number | boolean | string;
  reason?: string;
  message?: string;
  metadata?: {
    unit?: string;
    description?: string;
    source?: string;
    valueText?: string;
    /** Browse answers only: the tag may be written. */
    writable?: true;
    writeMin?: number;
    writeMax?: number;
  };
}

/** One result of `POST /api/v2/Tags/Write`. */
export interface TagWriteResult {
  fullTagId: string;
  status: 'Good' | 'Bad' | 'Uncertain';
  reason?: string;
  message?: string;
}

/** The problem document of every API failure (RFC 9457). */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  code?: string;
  errors?: {
    path: string;
    message: string;
    /** For `expression-invalid`: where in the expression, and what was expected there. */
    line?: number;
    column?: number;
    expected?: string;
  }[];
}

/** Sign-in response (spec §2.1), browser flavour: no token in the body. */
export interface SignInResponse {
  username: string;
  id: string;
  permissions: string[];
  preAuthToken?: string;
  requiresTwoFactor?: boolean;
  requiresPasswordChange?: boolean;
}

/** Webhook publisher authentication (spec §5). */
export interface WebhookAuthentication {
  mode: 'None' | 'Bearer token' | 'API key header' | 'Basic auth';
  bearerToken?: string;
  apiKeyHeaderName?: string;
  apiKeyHeaderValue?: string;
  basicAuthUsername?: string;
  basicAuthPassword?: string;
}

/** A webhook publisher configuration (spec §2.4); secrets come back as `********`. */
export interface WebhookConfig {
  name: string;
  destinationUrl: string;
  authentication: WebhookAuthentication;
  collections: string[];
  loggingMode: 'Snapshot' | 'On Change' | 'Everything';
  updateIntervalSeconds: number;
  autoConnect: boolean;
  [extra: string]: unknown;
}

/** A publisher's state (spec §3.1). */
export interface PublisherState {
  name: string;
  status: 'On' | 'Off' | 'Error';
  reason?: string;
  lastDelivery?: {
    at: string;
    ok: boolean;
    httpStatus?: number;
    attempts: number;
    durationMs: number;
    samples: number;
    error?: string;
  };
  counters: Record<string, number>;
}

/** A publisher as listed. */
export type WebhookPublisher = WebhookConfig & { state: PublisherState };

/** A collection. */
export interface Collection {
  name: string;
  members: string[];
}

/** A driver as `GET /api/v2/Drivers` lists it (DriverReport). */
export interface DriverView {
  name: string;
  type: string;
  /** `Running`, `Reconnecting`, `Stopped` or `Failed`. */
  state: string;
  /** The state as the driver itself reports it. */
  driverState?: string;
  since: string;
  message?: string;
  lastError?: { message: string; utcTimestamp: string };
  counters: Record<string, number>;
  tagCount: number;
  tagsByQuality?: Partial<Record<Quality, number>>;
}

/** An edge node as `GET /api/v2/Relay/{driver}/Nodes` lists it (RelayNode). */
export interface RelayNodeView {
  groupId: string;
  edgeNodeId: string;
  online: boolean;
  since: string;
  stale: boolean;
  lastBirth?: string;
  lastMessage?: string;
  bdSeq?: number;
  sequenceErrors: number;
  rebirthsRequested: number;
  historicalSamples: number;
  catchUp: boolean;
  tagCount: number;
  devices: { deviceId: string; online: boolean; since: string; tagCount: number }[];
}

/** An account as `GET /api/v2/Users` lists it (UserAccount). */
export interface UserView {
  id: string;
  username: string;
  /** A service account: no password, a generated token. */
  service: boolean;
  roles: string[];
  enabled: boolean;
  requiresPasswordChange: boolean;
  twoFactor: boolean;
  createdAt: string;
}

/** The value the API returns in place of a stored secret; sending it back keeps the secret. */
export const secretMask = '********';

/** MQTT publisher authentication (`MqttAuthentication`); secrets come back as `********`. */
export interface MqttAuthentication {
  mode: 'None' | 'Username password' | 'Client certificate';
  username?: string;
  password?: string;
  certFile?: string;
  keyFile?: string;
  keyPassphrase?: string;
}

/** An MQTT publisher configuration (`MqttPublisherConfig`); the broker URL comes back masked. */
export interface MqttConfig {
  name: string;
  brokerUrl: string;
  authentication: MqttAuthentication;
  collections: string[];
  loggingMode: 'Snapshot' | 'On Change' | 'Everything';
  updateIntervalMs: number;
  qos: 0 | 1;
  retain?: boolean;
  autoConnect: boolean;
  topicPrefix?: string;
  format: 'json' | 'json-per-tag' | 'sparkplugB';
  groupId?: string;
  edgeNodeId?: string;
  /** sparkplugB: the Primary Host Application followed (store-and-forward). */
  primaryHostId?: string;
  bufferLimitMB: number;
  [extra: string]: unknown;
}

/** A running Sparkplug publisher's `state.sparkplug`; the host fields only with a primaryHostId. */
export interface SparkplugState {
  commandsWritten: number;
  commandsRefused: number;
  primaryHostOnline?: boolean;
  /** ISO 8601: since when the host is online or offline as far as the publisher knows. */
  primaryHostSince?: string;
  storedSamples?: number;
  droppedSamples?: number;
  forwardedSamples?: number;
  catchingUp?: boolean;
}

/** An MQTT publisher's state (`MqttPublisherState`). */
export type MqttPublisherState = PublisherState & {
  connected: boolean;
  messages: number;
  queueDepth: number;
  oldestQueuedAgeSeconds: number;
  sparkplug?: SparkplugState;
};

/** An MQTT publisher as listed. */
export type MqttPublisher = MqttConfig & { state: MqttPublisherState };

/** A derived tag as `GET /api/v2/DerivedTags` lists it. */
export interface DerivedTagView {
  fullTagId: string;
  driver: string;
  expression: string;
  inputs: string[];
  dataType: string;
  trigger: 'change' | { intervalMs: number };
  unit?: string;
  description?: string;
  deadband?: number;
  lastEvaluation?: {
    utcTimestamp: string;
    quality: Quality;
    value?: number | boolean | string;
    reason?: string;
    message?: string;
  };
  evaluations: number;
  writes: number;
  faults: number;
}

/** What `POST /api/v2/DerivedTags/Test` answers. */
export interface DerivedTestResult {
  quality: Quality;
  value?: number | boolean | string;
  reason?: string;
  message?: string;
  dataType: string;
  utcTimestamp: string;
  inputs: { fullTagId: string; sample?: Sample }[];
}

/** A derived tag as its driver's profile entry holds it. */
export interface DerivedTagEntry {
  name: string;
  expression: string;
  dataType?: string;
  unit?: string;
  description?: string;
  trigger?: unknown;
  deadband?: number;
}

/** An alarm's priority, lowest first. */
export const alarmPriorities = ['Low', 'Medium', 'High', 'Urgent'] as const;
/** An alarm's priority. */
export type AlarmPriority = (typeof alarmPriorities)[number];

/** The states an alarm shows (ISA-18.2; an overlay takes precedence). */
export const alarmStates = [
  'Normal',
  'Unacknowledged',
  'Acknowledged',
  'ReturnedUnacknowledged',
  'Shelved',
  'Suppressed',
  'OutOfService',
] as const;
/** A state an alarm shows. */
export type AlarmState = (typeof alarmStates)[number];

/** An alarm as `GET /api/v2/Alerts` lists it (`Alert`). */
export interface AlertView {
  name: string;
  condition: string;
  source?: string;
  priority: AlarmPriority;
  severity: number;
  area?: string;
  state: AlarmState;
  active: boolean;
  acknowledged: boolean;
  activeSince?: string;
  changedAt?: string;
  value?: number | boolean | string;
  limit?: number | boolean | string;
  unit?: string;
  message: string;
  shelve?: {
    kind: 'Timed' | 'OneShot';
    since: string;
    until: string;
    account?: string;
    reason?: string;
  };
  suppressed: boolean;
  outOfService: boolean;
  quality: Quality;
  problem?: string;
}

/** One transition of the journal and the stream (`AlertTransition`). */
export interface AlertTransition {
  seq?: number;
  /** Epoch ms. */
  time: number;
  name: string;
  event: string;
  from: AlarmState;
  to: AlarmState;
  active: boolean;
  acknowledged: boolean;
  value?: number | boolean | string;
  limit?: number | boolean | string;
  account?: string;
  comment?: string;
  priority: AlarmPriority;
  severity: number;
  area?: string;
  message: string;
}

/** What `POST /api/v2/Alerts/Acknowledge` answers (`AlertBulkAcknowledgeResult`). */
export interface BulkAcknowledgeResult {
  results: { name: string; status: number; code?: string; detail?: string }[];
}

/** An alarm definition (`AlarmDefinition`), as the profile holds it. */
export interface AlarmDefinition {
  name: string;
  source?: string;
  condition: string;
  limit?: number;
  deadband?: number;
  setpoint?: number | string;
  value?: boolean | number | string;
  expression?: string;
  onDelayMs?: number;
  offDelayMs?: number;
  priority?: AlarmPriority;
  severity?: number;
  area?: string;
  message?: string;
  latching?: boolean;
  reAlarmAfterMs?: number;
  suppressWhen?: string;
  maxShelveMinutes?: number;
  enabled?: boolean;
}

/** What `GET /api/v2/Alerts/Statistics` answers (`AlertStatistics`). */
export interface AlertStatistics {
  from: string;
  to: string;
  activations: number;
  byPriority: Record<AlarmPriority, number>;
  perTenMinutes: { average: number; peak: number; peakWindowStart?: string };
  /** Activations in each 10-minute window from `from` (absent for very long periods). */
  perWindow?: number[];
  windows: number;
  floodWindows: number;
  floodShare: number;
  mostFrequent: { name: string; activations: number }[];
  chattering: { name: string; mostIn60s: number }[];
  stale: { name: string; activeSince: string }[];
  shelved: { actions: number; now: number };
}

/** The signed-in account and the gateway, as `GET /api/v2/Users/Current` answers (CurrentUser). */
export interface CurrentUser {
  username: string;
  id: string;
  kind: 'user' | 'service';
  roles: string[];
  permissions: string[];
  twoFactor: boolean;
  /** A self-service enrolment was started and awaits its first code. */
  twoFactorPending: boolean;
  theme: string | null;
  version: string;
  hostName: string;
}

/** A started two-factor enrolment (PendingTwoFactor). */
export interface PendingTwoFactor {
  /** `otpauth://` URI; its `secret` parameter is what a person types by hand. */
  uri: string;
  /** The URI as a QR code, a standalone SVG document. */
  qrCodeSvg: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** One line of `GET /api/v2/Events` (Event). */
export interface EventView {
  id: number;
  time: string;
  kind: 'audit' | 'log';
  level: 'info' | 'warn' | 'error' | 'fatal';
  component?: string;
  message: string;
  details: Record<string, unknown>;
}
