import { useSignal } from '@preact/signals';
import { useRef } from 'preact/hooks';
import { api, encodePath, failureMessage } from './api-client';
import type { DriverView } from './api-types';
import { DerivedTagsSection } from './derived-tags';
import { type CounterHistory, counterLines, recordPoll } from './driver-counters';
import { driverEndpoint } from './driver-endpoint';
import { driverTypeNames } from './driver-fields';
import { DriverForm } from './driver-form';
import { FormError } from './form-error';
import { formatTime } from './format';
import { Notice } from './notice';
import { RelayNodesTable } from './relay-nodes';
import { href, navigate, route } from './router';
import { can } from './session';
import { usePoll } from './use-poll';

// Reconnecting is lost communications: as unmistakable as Failed, never the grey of Stopped.
// Grey is for what is out of service on purpose: Stopped and Disabled.
const stateClass: Record<string, string> = {
  Running: 'ok',
  Reconnecting: 'lost',
  Failed: 'bad',
  Stopped: 'off',
  Disabled: 'off',
};

type Entry = Record<string, unknown>;

/** A card: the driver's report when it runs, its profile entry when this account may see it. */
interface DriverCard {
  name: string;
  type: string;
  report?: DriverView;
  entry?: Entry;
}

/** The running drivers, and for DriverManage every profile entry (disabled ones too). */
async function loadDrivers(): Promise<DriverCard[]> {
  const [reports, entries] = await Promise.all([
    api<{ drivers: DriverView[] }>('/api/v2/Drivers').then((answer) => answer.drivers),
    can('DriverManage')
      ? api<{ drivers: Entry[] }>('/api/v2/DriverConfigurations').then((answer) => answer.drivers)
      : Promise.resolve(undefined),
  ]);
  if (!entries) return reports.map((report) => ({ name: report.name, type: report.type, report }));
  return entries.map((entry) => {
    const name = String(entry.name);
    const report = reports.find((candidate) => candidate.name === name);
    return { name, type: String(entry.type), entry, ...(report ? { report } : {}) };
  });
}

const manageReason = 'Changing drivers needs the DriverManage permission (Administrators).';

/**
 * Drivers: each driver's state, endpoint, last error, counters as rates and tags by quality, a
 * link to its tags; for Administrators (DriverManage) add, edit, start and stop (the profile's
 * `enabled`), and delete, each button saying why when it may not be used (`#/drivers/new`,
 * `#/drivers/edit/<name>`); then the derived tags, with their editor.
 */
export function DriversPage() {
  const [, action, name] = route.value.segments;
  const manage = can('DriverManage');
  if (manage && action === 'new') return <DriverForm onDone={() => navigate('drivers')} />;
  if (manage && action === 'edit' && name) return <EditDriver key={name} name={name} />;
  return <DriverList />;
}

function EditDriver({ name }: { name: string }) {
  const entry = usePoll(
    () => api<Entry>(`/api/v2/Drivers/${encodeURIComponent(name)}/Configuration`),
    0,
    name,
  );
  if (entry.error) {
    return <FormError>{entry.error}</FormError>;
  }
  if (!entry.data) return <p role="status">Loading…</p>;
  return <DriverForm existing={entry.data} onDone={() => navigate('drivers')} />;
}

function DriverList() {
  const drivers = usePoll(loadDrivers, 2_000);
  const manage = can('DriverManage');
  const message = useSignal('');
  const confirming = useSignal('');
  const busy = useSignal('');
  // Each driver's counters at the last two polls, for the rates; recorded once per poll.
  const history = useRef(new Map<string, CounterHistory>());
  const recorded = useRef<DriverCard[] | undefined>(undefined);
  if (drivers.data && drivers.data !== recorded.current) {
    recorded.current = drivers.data;
    const polled = new Map<string, Record<string, number>>();
    for (const card of drivers.data) if (card.report) polled.set(card.name, card.report.counters);
    recordPoll(history.current, polled, Date.now());
  }

  const run = async (card: DriverCard, what: 'enable' | 'disable' | 'delete') => {
    message.value = '';
    busy.value = card.name;
    try {
      const path = `/api/v2/Drivers/${encodeURIComponent(card.name)}`;
      if (what === 'delete') {
        await api(path, { method: 'DELETE' });
        message.value = `${card.name} was deleted.`;
      } else {
        const entry = await api<Entry>(`${path}/Configuration`);
        await api(path, { method: 'PUT', body: { ...entry, enabled: what === 'enable' } });
        message.value = `${card.name} was ${what === 'enable' ? 'started' : 'stopped'}.`;
      }
    } catch (error) {
      message.value = `${card.name}: ${failureMessage(error)}`;
    } finally {
      busy.value = '';
      confirming.value = '';
      drivers.reload();
    }
  };

  return (
    <section class="panel" aria-labelledby="drivers-title">
      <div class="panel-head">
        <h1 id="drivers-title">Drivers</h1>
        <div class="actions">
          {manage ? (
            <a class="button primary" href={href('drivers', 'new')}>
              Add driver
            </a>
          ) : (
            <>
              <button type="button" disabled aria-describedby="drivers-manage-reason">
                Add driver
              </button>
              <span id="drivers-manage-reason" class="muted">
                {manageReason}
              </span>
            </>
          )}
        </div>
      </div>
      <FormError>{drivers.error}</FormError>
      {manage ? (
        <p class="muted">
          Stop and Start set the driver's <code>enabled</code> in the profile: a stopped driver
          serves no tags and stays stopped after a restart of tagd.
        </p>
      ) : null}
      <Notice>{message.value}</Notice>
      {!drivers.data ? (
        <p role="status">Loading…</p>
      ) : drivers.data.length === 0 ? (
        <p>The profile has no drivers.</p>
      ) : (
        <div class="cards">
          {drivers.data.map((card) => {
            const report = card.report;
            const disabled = card.entry?.enabled === false;
            const state = disabled ? 'Disabled' : (report?.state ?? 'Stopped');
            const lastError = report?.lastError;
            const counters = history.current.get(card.name);
            const lines =
              report && counters
                ? counterLines(counters.last, counters.before, undefined, card.type)
                : [];
            const derived = card.type === 'derived';
            // Why a button may not be used here, or '' when it may.
            const denied = !manage
              ? manageReason
              : derived && !can('DerivedTagManage')
                ? 'Derived tags need the DerivedTagManage permission too.'
                : '';
            const editDenied = denied || (derived ? 'Edit derived tags in the section below.' : '');
            const reasonId = `driver-${card.name}-reason`;
            return (
              <article class="card" key={card.name} aria-labelledby={`driver-${card.name}`}>
                <h2 id={`driver-${card.name}`}>
                  {card.name} <span class="muted">{driverTypeNames[card.type] ?? card.type}</span>
                </h2>
                <p>
                  <span class={`status status-${stateClass[state] ?? 'off'}`}>{state}</span>
                  {report?.since && !disabled ? (
                    <span class="muted"> since {formatTime(report.since)}</span>
                  ) : null}
                </p>
                <dl class="facts">
                  {card.entry ? (
                    <div>
                      <dt>Endpoint</dt>
                      <dd data-testid="driver-endpoint">
                        <code>{driverEndpoint(card.entry)}</code>
                      </dd>
                    </div>
                  ) : null}
                  {report?.message ? (
                    <div>
                      <dt>Why</dt>
                      <dd>{report.message}</dd>
                    </div>
                  ) : null}
                  {report ? (
                    <div>
                      <dt>Last error</dt>
                      <dd>
                        {lastError
                          ? `${lastError.message} (${formatTime(lastError.utcTimestamp)})`
                          : 'None'}
                      </dd>
                    </div>
                  ) : null}
                  <div>
                    <dt>Tags</dt>
                    <dd>
                      {report
                        ? report.tagCount
                        : Array.isArray(card.entry?.tags)
                          ? `${card.entry.tags.length} (not served while disabled)`
                          : '—'}
                      {report?.tagsByQuality
                        ? ` (${Object.entries(report.tagsByQuality)
                            .filter(([, count]) => count)
                            .map(([quality, count]) => `${count} ${quality}`)
                            .join(', ')})`
                        : ''}
                    </dd>
                  </div>
                  {lines.map((line) => (
                    <div key={line.key} data-counter={line.key}>
                      <dt>{line.label}</dt>
                      <dd title={`${line.total.toLocaleString()} in total`}>{line.text}</dd>
                    </div>
                  ))}
                </dl>
                {card.type === 'sparkplug' ? <RelayNodesTable driver={card.name} /> : null}
                <p>
                  <a href={`${href('tags')}?filter=${encodePath(`${card.name}/`)}`}>
                    Show the tags of {card.name}
                  </a>
                </p>
                <div class="actions">
                  {editDenied ? (
                    <button type="button" disabled aria-describedby={reasonId}>
                      Edit<span class="visually-hidden"> {card.name}</span>
                    </button>
                  ) : (
                    <a class="button" href={href('drivers', 'edit', card.name)}>
                      Edit<span class="visually-hidden"> {card.name}</span>
                    </a>
                  )}
                  <button
                    type="button"
                    disabled={Boolean(denied) || busy.value === card.name || !card.entry}
                    aria-describedby={denied ? reasonId : undefined}
                    onClick={() => void run(card, disabled ? 'enable' : 'disable')}
                  >
                    {disabled ? 'Start' : 'Stop'}
                    <span class="visually-hidden"> {card.name}</span>
                  </button>
                  {confirming.value === card.name ? (
                    <button
                      type="button"
                      class="danger"
                      disabled={busy.value === card.name}
                      onClick={() => void run(card, 'delete')}
                    >
                      Confirm: delete {card.name} and its tags
                    </button>
                  ) : (
                    <button
                      type="button"
                      disabled={Boolean(denied)}
                      aria-describedby={denied ? reasonId : undefined}
                      onClick={() => {
                        confirming.value = card.name;
                      }}
                    >
                      Delete<span class="visually-hidden"> {card.name}</span>
                    </button>
                  )}
                </div>
                {editDenied ? (
                  <p id={reasonId} class="muted">
                    {editDenied}
                  </p>
                ) : null}
              </article>
            );
          })}
        </div>
      )}
      {drivers.data?.some((card) => card.type === 'derived') || can('DerivedTagManage') ? (
        <DerivedTagsSection />
      ) : null}
    </section>
  );
}
