import { useEffect, useState } from 'preact/hooks';
import { failureMessage } from './api-client';

/** What {@link usePoll} returns. */
export interface Polled<T> {
  data: T | undefined;
  /** The last failure's message, cleared by the next success. */
  error: string;
  /** Loads again now (after a change the user made). */
  reload(): void;
}

/**
 * Loads `load()` now and every `intervalMs` while the component is shown (status pages:
 * drivers, publishers). A failed poll keeps the last data on screen with the error beside it.
 */
export function usePoll<T>(load: () => Promise<T>, intervalMs: number, key = ''): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState('');
  const [round, setRound] = useState(0);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      // A hidden tab asks nothing (a panel PC may keep many open); it catches up when shown.
      if (document.hidden && intervalMs > 0) {
        timer = setTimeout(tick, intervalMs);
        return;
      }
      try {
        const result = await load();
        if (stopped) return;
        setData(result);
        setError('');
      } catch (failure) {
        if (stopped) return;
        setError(failureMessage(failure));
      }
      if (!stopped && intervalMs > 0) timer = setTimeout(tick, intervalMs);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
    // load is a fresh closure each render: the key and the round say when to start over.
  }, [key, round, intervalMs]);
  return { data, error, reload: () => setRound((value) => value + 1) };
}
