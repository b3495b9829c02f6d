/**
 * The alarms that need attention, kept live for the banner and the Alarms page: read from
 * `GET /api/v2/Alerts` when `GET /api/v2/Alerts/Stream` opens and again after each batch of
 * transitions it sends (one read at a time; transitions arriving meanwhile cause one more), and
 * every 10 s while the tab is shown, for what changes without a transition (an alarm whose
 * source stops being Good shows it in its `quality`).
 */
import { signal } from '@preact/signals';
import { api, failureMessage } from './api-client';
import type { AlertTransition, AlertView } from './api-types';
import { openEventStream } from './event-stream';

/** The alarms not Normal, in the API's order (priority, then newest change first). */
export const alerts = signal<readonly AlertView[]>([]);

/** False until the first list arrived. */
export const alertsLoaded = signal(false);

/** Why the last read failed, or empty. */
export const alertsError = signal('');

/** The stream's state, shown beside the list. */
export const alarmFeedState = signal<'connecting' | 'live' | 'reconnecting' | 'stopped'>('stopped');

/** Bumped after each batch of transitions, so views reading more than the list read again. */
export const transitionTick = signal(0);

/** How often the list is read without a transition, ms. */
const backstopMs = 10_000;

let users = 0;
let closeStream: (() => void) | undefined;
let backstop: ReturnType<typeof setInterval> | undefined;
let reading: Promise<void> | undefined;
let readAgain = false;
/** Counts starts: a read begun before the feed stopped (another account's) is dropped. */
let generation = 0;

/**
 * Starts the feed (or joins it when running).
 * @returns the function that leaves it; the last one to leave closes the stream and forgets the
 * list, so the next account signed in on this page starts from its own.
 */
export function joinAlarmFeed(): () => void {
  users += 1;
  if (users === 1) start();
  return () => {
    users -= 1;
    if (users === 0) stop();
  };
}

/** Reads the list now (after an action of this page); single-flight, with one trailing read. */
export function refreshAlerts(): Promise<void> {
  if (reading) {
    readAgain = true;
    return reading;
  }
  const started = generation;
  const current: Promise<void> = (async () => {
    do {
      readAgain = false;
      try {
        const list = await api<AlertView[]>('/api/v2/Alerts');
        if (users === 0 || generation !== started) return;
        alerts.value = list;
        alertsLoaded.value = true;
        alertsError.value = '';
      } catch (error) {
        if (users === 0 || generation !== started) return;
        alertsError.value = failureMessage(error);
      }
    } while (readAgain && users > 0 && generation === started);
  })().finally(() => {
    if (reading === current) reading = undefined;
  });
  reading = current;
  return current;
}

function start(): void {
  generation += 1;
  closeStream = openEventStream('/api/v2/Alerts/Stream', {
    onData: (data) => {
      // The first event ([]) says the stream is open: the list read now misses nothing.
      const batch = Array.isArray(data) ? (data as AlertTransition[]) : [];
      if (batch.length > 0) transitionTick.value += 1;
      void refreshAlerts();
    },
    onState: (state) => {
      alarmFeedState.value = state;
    },
  });
  backstop = setInterval(() => {
    if (!document.hidden) void refreshAlerts();
  }, backstopMs);
  void refreshAlerts();
}

function stop(): void {
  generation += 1;
  reading = undefined;
  closeStream?.();
  closeStream = undefined;
  if (backstop) clearInterval(backstop);
  backstop = undefined;
  alarmFeedState.value = 'stopped';
  alerts.value = [];
  alertsLoaded.value = false;
  alertsError.value = '';
}
