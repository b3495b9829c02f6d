/**
 * Live tag values from `GET /api/v2/Tags/Stream` (server-sent events): the first events carry
 * every matching sample, each later one a store batch. Samples land in a plain Map (10,000 tags
 * must not mean 10,000 signals); the page re-renders once per animation frame at most, through
 * {@link feedTick}, however fast batches arrive.
 */
import { signal } from '@preact/signals';
import { endSession, renewSession } from './api-client';
import type { Sample } from './api-types';

/** Latest sample per tag path. */
export const samples = new Map<string, Sample>();

/** Every known tag path, sorted; replaced only when tags appear. */
export const tagPaths = signal<readonly string[]>([]);

/** Bumped (at most once per frame) when samples changed. */
export const feedTick = signal(0);

/** Connection state shown to the user. */
export const feedState = signal<'connecting' | 'live' | 'reconnecting' | 'stopped'>('stopped');

let source: EventSource | undefined;
let users = 0;
let frame = 0;
let pathsChanged = false;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let retryDelayMs = 1_000;
const batchListeners = new Set<(batch: readonly Sample[]) => void>();

/**
 * Calls `listener` with every batch the stream delivers, in order, as it arrives (the trend
 * appends them; {@link feedTick} only says that something changed).
 * @returns the function that stops the calls.
 */
export function onBatch(listener: (batch: readonly Sample[]) => void): () => void {
  batchListeners.add(listener);
  return () => {
    batchListeners.delete(listener);
  };
}

/**
 * Starts the feed (or joins it when already running).
 * @returns the function that leaves it; the last one to leave closes the connection.
 */
export function joinFeed(): () => void {
  users += 1;
  if (users === 1) connect();
  return () => {
    users -= 1;
    if (users === 0) disconnect();
  };
}

function connect(): void {
  feedState.value = source ? 'reconnecting' : 'connecting';
  const stream = new EventSource(`/api/v2/Tags/Stream?pattern=${encodeURIComponent('**')}`);
  source = stream;
  stream.onopen = () => {
    feedState.value = 'live';
    retryDelayMs = 1_000;
  };
  stream.onmessage = (event: MessageEvent<string>) => {
    let batch: Sample[];
    try {
      batch = JSON.parse(event.data) as Sample[];
    } catch {
      return;
    }
    for (const sample of batch) {
      if (!samples.has(sample.fullTagId)) pathsChanged = true;
      samples.set(sample.fullTagId, sample);
    }
    for (const listener of batchListeners) listener(batch);
    if (frame === 0) frame = requestAnimationFrame(publish);
  };
  stream.onerror = () => {
    if (source !== stream) return;
    // Not live from here until the next open, whatever happens next.
    feedState.value = 'reconnecting';
    // EventSource retries a dropped stream by itself; a refused one (401 once the access
    // cookie expired, a restart) is CLOSED: renew the session, then connect again.
    if (stream.readyState !== EventSource.CLOSED) return;
    retryTimer = setTimeout(async () => {
      retryTimer = undefined;
      if (users === 0 || source !== stream) return;
      // Refused: the sign-in is over (signed out elsewhere, disabled, expired): back to sign-in.
      // Unreachable (a restart): keep trying on the growing delay.
      if ((await renewSession()) === 'refused') {
        disconnect();
        endSession();
        return;
      }
      if (users > 0 && source === stream) connect();
    }, retryDelayMs);
    retryDelayMs = Math.min(retryDelayMs * 2, 10_000);
  };
}

function publish(): void {
  frame = 0;
  if (pathsChanged) {
    pathsChanged = false;
    tagPaths.value = [...samples.keys()].sort();
  }
  feedTick.value += 1;
}

function disconnect(): void {
  source?.close();
  source = undefined;
  if (retryTimer) clearTimeout(retryTimer);
  retryTimer = undefined;
  feedState.value = 'stopped';
}

/**
 * Forgets every sample (at sign-out or when the session ends), so the next account to sign in
 * on this page starts from what its own stream sends.
 */
export function clearFeed(): void {
  disconnect();
  samples.clear();
  tagPaths.value = [];
  feedTick.value += 1;
}
