import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, failureMessage } from './api-client';
import type { EventView } from './api-types';
import { FormError } from './form-error';
import { Table } from './table';

/** How often the page asks for what is new, ms. */
const pollMs = 5_000;
/** Most events kept on the page: the server's two rings together (1,000 audit lines, 500 others). */
const maxEvents = 1_500;

const levelWords: Record<EventView['level'], string> = {
  info: 'Info',
  warn: 'Warning',
  error: 'Error',
  fatal: 'Fatal',
};
const levelStatus: Record<EventView['level'], string> = {
  info: 'ok',
  warn: 'warn',
  error: 'bad',
  fatal: 'bad',
};

/**
 * Events (Administrators, `AuditView`): what the log says without a shell on the host: the
 * recent audit lines (sign-ins and refusals, writes, changes) and the warnings and errors of
 * every component, newest first, filtered by kind, level and text. New ones are fetched with
 * `afterId` every 5 s while the page is shown.
 */
export function EventsPage() {
  const events = useSignal<EventView[]>([]);
  const loaded = useSignal(false);
  const error = useSignal('');
  const kind = useSignal<'' | 'audit' | 'log'>('');
  const level = useSignal<'' | 'warn' | 'error'>('');
  const text = useSignal('');

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let lastId: number | undefined;
    const tick = async () => {
      if (!document.hidden) {
        try {
          const query = lastId === undefined ? '' : `?afterId=${lastId}`;
          const answer = await api<{ events: EventView[] }>(`/api/v2/Events${query}`);
          if (stopped) return;
          if (answer.events.length > 0) {
            lastId = answer.events[answer.events.length - 1]?.id ?? lastId;
            // The server answers oldest first; the page shows newest first.
            const fresh = [...answer.events].reverse();
            events.value = [...fresh, ...events.value].slice(0, maxEvents);
          }
          loaded.value = true;
          error.value = '';
        } catch (failure) {
          if (stopped) return;
          error.value = failureMessage(failure);
        }
      }
      if (!stopped) timer = setTimeout(tick, pollMs);
    };
    void tick();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, []);

  const needle = text.value.trim().toLowerCase();
  const shown = events.value.filter(
    (event) =>
      (kind.value === '' || event.kind === kind.value) &&
      (level.value === '' ||
        (level.value === 'warn'
          ? event.level !== 'info'
          : event.level === 'error' || event.level === 'fatal')) &&
      (needle === '' || searchable(event).includes(needle)),
  );

  return (
    <section class="panel" aria-labelledby="events-title">
      <div class="panel-head">
        <h1 id="events-title">Events</h1>
        <p class="hint">
          Kept in memory since tagd started; the journal (<code>journalctl -u tagd</code>) has them
          all.
        </p>
      </div>
      <div class="toolbar">
        <label class="field">
          <span>Kind</span>
          <select
            value={kind.value}
            onChange={(event) => {
              kind.value = event.currentTarget.value as typeof kind.value;
            }}
          >
            <option value="">Audit and log</option>
            <option value="audit">Audit (sign-ins, writes, changes)</option>
            <option value="log">Log (warnings and errors)</option>
          </select>
        </label>
        <label class="field">
          <span>Level</span>
          <select
            value={level.value}
            onChange={(event) => {
              level.value = event.currentTarget.value as typeof level.value;
            }}
          >
            <option value="">Any level</option>
            <option value="warn">Warnings and errors</option>
            <option value="error">Errors only</option>
          </select>
        </label>
        <label class="field">
          <span>Text</span>
          <input
            type="search"
            value={text.value}
            onInput={(event) => {
              text.value = event.currentTarget.value;
            }}
          />
        </label>
      </div>
      <FormError>{error.value}</FormError>
      {!loaded.value ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <p class="hint" role="status">
            {shown.length === events.value.length
              ? `${shown.length} events.`
              : `${shown.length} of ${events.value.length} events.`}
          </p>
          <Table
            class="stack-table"
            caption="Events, newest first"
            columns={['Time', 'Level', 'Source', 'Message', 'Details']}
          >
            {shown.map((event) => (
              <tr key={event.id}>
                <td data-label="Time">
                  <time dateTime={event.time}>{new Date(event.time).toLocaleString()}</time>
                </td>
                <td data-label="Level">
                  <span class={`status status-${levelStatus[event.level]}`}>
                    {levelWords[event.level]}
                  </span>
                </td>
                <td data-label="Source">
                  {event.kind === 'audit' ? 'Audit' : (event.component ?? 'tagd')}
                </td>
                <th scope="row">{event.message}</th>
                <td data-label="Details">
                  <DetailList details={event.details} />
                </td>
              </tr>
            ))}
          </Table>
        </>
      )}
    </section>
  );
}

/** An event's other fields as `name: value` lines (objects as compact JSON). */
function DetailList({ details }: { details: Record<string, unknown> }) {
  const entries = Object.entries(details);
  if (entries.length === 0) return null;
  return (
    <ul class="event-details">
      {entries.map(([name, value]) => (
        <li key={name}>
          <span class="muted">{name}:</span>{' '}
          {typeof value === 'string' ? value : JSON.stringify(value)}
        </li>
      ))}
    </ul>
  );
}

function searchable(event: EventView): string {
  return `${event.message} ${event.component ?? ''} ${JSON.stringify(event.details)}`.toLowerCase();
}
