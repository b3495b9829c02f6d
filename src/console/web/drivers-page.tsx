import { api, encodePath } from './api-client';
import type { DriverView } from './api-types';
import { DerivedTagsSection } from './derived-tags';
import { formatTime } from './format';
import { RelayNodesTable } from './relay-nodes';
import { href } from './router';
import { can } from './session';
import { usePoll } from './use-poll';

// Reconnecting is lost communications: as unmistakable as Failed, never the grey of Stopped.
const stateClass: Record<string, string> = {
  Running: 'ok',
  Reconnecting: 'lost',
  Failed: 'bad',
  Stopped: 'off',
};

/**
 * Drivers: each driver's state, last error, counters and tags by quality, and a link to its tags;
 * then the derived tags, with their editor.
 */
export function DriversPage() {
  const drivers = usePoll(
    () => api<{ drivers: DriverView[] }>('/api/v2/Drivers').then((answer) => answer.drivers),
    2_000,
  );
  return (
    <section class="panel" aria-labelledby="drivers-title">
      <h1 id="drivers-title">Drivers</h1>
      {drivers.error ? (
        <p class="form-error" role="alert">
          {drivers.error}
        </p>
      ) : null}
      {!drivers.data ? (
        <p role="status">Loading…</p>
      ) : drivers.data.length === 0 ? (
        <p>The profile has no drivers.</p>
      ) : (
        <div class="cards">
          {drivers.data.map((driver) => {
            const state = driver.state;
            const lastError = driver.lastError;
            return (
              <article class="card" key={driver.name} aria-labelledby={`driver-${driver.name}`}>
                <h2 id={`driver-${driver.name}`}>
                  {driver.name} <span class="muted">{driver.type}</span>
                </h2>
                <p>
                  <span class={`status status-${stateClass[state] ?? 'off'}`}>{state}</span>
                  {driver.since ? (
                    <span class="muted"> since {formatTime(driver.since)}</span>
                  ) : null}
                </p>
                <dl class="facts">
                  {driver.message ? (
                    <div>
                      <dt>Why</dt>
                      <dd>{driver.message}</dd>
                    </div>
                  ) : null}
                  <div>
                    <dt>Last error</dt>
                    <dd>
                      {lastError
                        ? `${lastError.message} (${formatTime(lastError.utcTimestamp)})`
                        : 'None'}
                    </dd>
                  </div>
                  <div>
                    <dt>Tags</dt>
                    <dd>
                      {driver.tagCount}
                      {driver.tagsByQuality
                        ? ` (${Object.entries(driver.tagsByQuality)
                            .filter(([, count]) => count)
                            .map(([quality, count]) => `${count} ${quality}`)
                            .join(', ')})`
                        : ''}
                    </dd>
                  </div>
                  {Object.entries(driver.counters).map(([name, value]) => (
                    <div key={name}>
                      <dt>{name}</dt>
                      <dd>{value.toLocaleString()}</dd>
                    </div>
                  ))}
                </dl>
                {driver.type === 'sparkplug' ? <RelayNodesTable driver={driver.name} /> : null}
                <a href={`${href('tags')}?filter=${encodePath(`${driver.name}/`)}`}>
                  Show the tags of {driver.name}
                </a>
              </article>
            );
          })}
        </div>
      )}
      {drivers.data?.some((driver) => driver.type === 'derived') || can('DerivedTagManage') ? (
        <DerivedTagsSection />
      ) : null}
    </section>
  );
}
