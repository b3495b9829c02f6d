/**
 * Live tag values from `GET /api/v2/Tags/Stream` (server-sent events): the first events carry
 * every matching sample, each later one a store batch. Samples land in a plain Map (10,000 tags
 * must not mean 10,000 signals); the page re-renders once per animation frame at most, through
 * {@link feedTick}, however fast batches arrive. Session renewal and reconnection:
 * event-stream.ts.
 */
import { signal } from '@preact/signals';
import type { Sample } from './api-types';
import { openEventStream } from './event-stream';

/** Latest sample per tag path. */
export const samples = new Map<string, Sample>();

/** Every known tag path, sorted; replaced only when tags appear. */
export const tagPaths = signal<readonly string[]>([]);

/** Bumped (at most once per frame) when samples changed. */
export const feedTick = signal(0);

/** Connection state shown to the user. */
export const feedState = signal<'connecting' | 'live' | 'reconnecting' | 'stopped'>('stopped');

let closeStream: (() => void) | undefined;
let users = 0;
let frame = 0;
let pathsChanged = false;
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
  closeStream = openEventStream(`/api/v2/Tags/Stream?pattern=${encodeURIComponent('**')}`, {
    onData: (data) => {
      if (!Array.isArray(data)) return;
      for (const sample of data as Sample[]) {
        if (!samples.has(sample.fullTagId)) pathsChanged = true;
        samples.set(sample.fullTagId, sample);
      }
      for (const listener of batchListeners) listener(data as Sample[]);
      if (frame === 0) frame = requestAnimationFrame(publish);
    },
    onState: (state) => {
      feedState.value = state;
    },
  });
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
  closeStream?.();
  closeStream = undefined;
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
