import { useState } from 'preact/hooks';
import { JournalTable } from './alarm-journal-table';
import { stateWords } from './alarm-words';
import { ApiError, api, failureMessage, renewSession } from './api-client';
import {
  type AlarmPriority,
  type AlarmState,
  type AlertTransition,
  alarmPriorities,
  alarmStates,
} from './api-types';
import { controlAttributes, Field } from './field';
import { FormError } from './form-error';
import { href, route } from './router';
import { TextField } from './text-field';
import { usePoll } from './use-poll';

/** Entries per page of the journal. */
const pageSize = 200;
/** Most entries a CSV export holds (the API's bound). */
const csvLimit = 100_000;

const periods = [
  { id: '1h', label: 'Last hour', from: 'now-1h' },
  { id: '24h', label: 'Last 24 hours', from: 'now-24h' },
  { id: '7d', label: 'Last 7 days', from: 'now-7d' },
  { id: '30d', label: 'Last 30 days', from: 'now-30d' },
  { id: 'custom', label: 'From … to …', from: '' },
] as const;

/** The journal's filters, as the page's URL holds them (`#/alarms/journal?…`). */
interface JournalFilter {
  period: string;
  /** Custom period ends, ISO 8601. */
  from: string;
  to: string;
  name: string;
  area: string;
  priorities: AlarmPriority[];
  states: AlarmState[];
}

function filterOf(query: URLSearchParams): JournalFilter {
  const list = <T extends string>(key: string, allowed: readonly T[]): T[] =>
    (query.get(key) ?? '').split(',').filter((item): item is T => allowed.includes(item as T));
  return {
    period: query.get('period') ?? '24h',
    from: query.get('from') ?? '',
    to: query.get('to') ?? '',
    name: query.get('name') ?? '',
    area: query.get('area') ?? '',
    priorities: list('priority', alarmPriorities),
    states: list('state', alarmStates),
  };
}

/** The page's URL query of a filter. */
function pageQuery(filter: JournalFilter): string {
  const query = new URLSearchParams();
  query.set('period', filter.period);
  if (filter.period === 'custom') {
    if (filter.from) query.set('from', filter.from);
    if (filter.to) query.set('to', filter.to);
  }
  if (filter.name.trim()) query.set('name', filter.name.trim());
  if (filter.area.trim()) query.set('area', filter.area.trim());
  if (filter.priorities.length) query.set('priority', filter.priorities.join(','));
  if (filter.states.length) query.set('state', filter.states.join(','));
  return query.toString();
}

/** The API's query (`GET /api/v2/Alerts/Journal`) of a filter, without limit and format. */
function journalApiQuery(filter: JournalFilter): URLSearchParams {
  const query = new URLSearchParams();
  const preset = periods.find((period) => period.id === filter.period);
  if (filter.period === 'custom') {
    if (filter.from) query.set('from', filter.from);
    if (filter.to) query.set('to', filter.to);
  } else {
    query.set('from', preset?.from || 'now-24h');
  }
  if (filter.name.trim()) query.set('name', filter.name.trim());
  if (filter.area.trim()) query.set('area', filter.area.trim());
  if (filter.priorities.length) query.set('priority', filter.priorities.join(','));
  if (filter.states.length) query.set('state', filter.states.join(','));
  return query;
}

/** An ISO time as a `datetime-local` value in the browser's zone (`2026-11-27T05:30`). */
function localInput(iso: string): string {
  const date = new Date(iso);
  if (!iso || Number.isNaN(date.getTime())) return '';
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(
    date.getHours(),
  )}:${pad(date.getMinutes())}`;
}

/** A `datetime-local` value as ISO 8601 UTC, or empty. */
function isoOf(local: string): string {
  const date = new Date(local);
  return local && !Number.isNaN(date.getTime()) ? date.toISOString() : '';
}

/**
 * The alarm journal: every transition, newest first, filtered by period, alarm names, area,
 * priorities and the states transitions went into; pages of 200 with "Load older entries";
 * the same filter as a CSV file (the API's `format=csv`). The filter lives in the URL, so a
 * filtered journal can be bookmarked or sent.
 */
export function AlarmJournalView() {
  const applied = filterOf(route.value.query);
  const appliedKey = pageQuery(applied);
  const [draft, setDraft] = useState<JournalFilter>(applied);
  const [draftKey, setDraftKey] = useState(appliedKey);
  const [older, setOlder] = useState<AlertTransition[]>([]);
  const [exhausted, setExhausted] = useState(false);
  const [loadingOlder, setLoadingOlder] = useState(false);
  // The URL changed (Apply, back button): the form shows what is applied.
  if (draftKey !== appliedKey) {
    setDraft(applied);
    setDraftKey(appliedKey);
    setOlder([]);
    setExhausted(false);
  }
  const apiQuery = journalApiQuery(applied);
  const first = usePoll(
    async () => {
      const query = new URLSearchParams(apiQuery);
      query.set('limit', String(pageSize));
      return (await api<{ entries: AlertTransition[] }>(`/api/v2/Alerts/Journal?${query}`)).entries;
    },
    0,
    appliedKey,
  );
  const [failure, setFailure] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const entries = [...(first.data ?? []), ...older];
  const csvQuery = new URLSearchParams(apiQuery);
  csvQuery.set('limit', String(csvLimit));
  csvQuery.set('format', 'csv');
  const csvHref = `/api/v2/Alerts/Journal?${csvQuery}`;

  const apply = (event: Event) => {
    event.preventDefault();
    setFailure('');
    const found: Record<string, string> = {};
    if (draft.period === 'custom') {
      if (!draft.from) found.from = 'Choose when the period starts.';
      if (!draft.to) found.to = 'Choose when the period ends.';
      else if (draft.from && draft.to < draft.from) found.to = 'Must not be before From.';
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    window.location.hash = `${href('alarms', 'journal')}?${pageQuery(draft)}`;
  };

  const loadOlder = async () => {
    const last = entries.at(-1)?.seq;
    if (last === undefined) return;
    setLoadingOlder(true);
    try {
      const query = new URLSearchParams(apiQuery);
      query.set('limit', String(pageSize));
      query.set('afterSeq', String(last));
      const page = await api<{ entries: AlertTransition[] }>(`/api/v2/Alerts/Journal?${query}`);
      setOlder([...older, ...page.entries]);
      if (page.entries.length < pageSize) setExhausted(true);
    } catch (caught) {
      setFailure(failureMessage(caught));
    } finally {
      setLoadingOlder(false);
    }
  };

  // The CSV is a plain download with the session cookie: renew an expired access cookie first,
  // so the file is the journal and not a 401 problem document.
  const onCsv = async (event: MouseEvent) => {
    const link = event.currentTarget as HTMLAnchorElement;
    if (link.dataset.ready === 'true') {
      delete link.dataset.ready;
      return;
    }
    event.preventDefault();
    try {
      await api('/api/v2/Alerts/Journal?limit=1');
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 401) await renewSession();
    }
    link.dataset.ready = 'true';
    link.click();
  };

  const set = (patch: Partial<JournalFilter>) => setDraft({ ...draft, ...patch });
  const shownError = first.error || failure;
  // The period's ends: set when the picker commits a moment (change), not on every keystroke.
  const moment = (key: 'from' | 'to', label: string) => (
    <Field id={`journal-${key}`} label={label} error={errors[key]}>
      <input
        {...controlAttributes(`journal-${key}`, errors[key])}
        class="journal-control"
        type="datetime-local"
        value={localInput(draft[key])}
        onChange={(event) => set({ [key]: isoOf(event.currentTarget.value) })}
      />
    </Field>
  );
  const nameHint = 'Comma-separated; empty: every alarm.';
  const areaHint = 'An area takes the areas below it.';

  return (
    <div class="alarm-journal">
      <form class="journal-filter" aria-label="Journal filter" onSubmit={apply}>
        <Field id="journal-period" label="Period">
          <select
            id="journal-period"
            class="journal-control"
            value={draft.period}
            onChange={(event) => set({ period: event.currentTarget.value })}
          >
            {periods.map((period) => (
              <option key={period.id} value={period.id}>
                {period.label}
              </option>
            ))}
          </select>
        </Field>
        {draft.period === 'custom' ? (
          <>
            {moment('from', 'From')}
            {moment('to', 'To')}
          </>
        ) : null}
        <TextField
          id="journal-name"
          label="Alarm names"
          hint={nameHint}
          class="journal-control"
          value={draft.name}
          onValue={(name) => set({ name })}
        />
        <TextField
          id="journal-area"
          label="Area"
          hint={areaHint}
          class="journal-control"
          value={draft.area}
          onValue={(area) => set({ area })}
        />
        <Choices
          legend="Priority"
          all={alarmPriorities}
          chosen={draft.priorities}
          words={(priority) => priority}
          onChosen={(priorities) => set({ priorities })}
        />
        <Choices
          legend="State it went into"
          all={alarmStates}
          chosen={draft.states}
          words={(state) => stateWords[state]}
          onChosen={(states) => set({ states })}
        />
        <div class="buttons">
          <button type="submit" class="primary">
            Apply filter
          </button>
          <a class="button" href={csvHref} download="alarm-journal.csv" onClick={onCsv}>
            Download CSV
          </a>
        </div>
      </form>
      <FormError>{shownError}</FormError>
      {first.data === undefined ? (
        first.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <p role="status" class="muted">
            {entries.length} entr{entries.length === 1 ? 'y' : 'ies'} shown, newest first.
          </p>
          <JournalTable entries={entries} caption="Alarm journal, newest first" />
          {first.data.length === pageSize && !exhausted ? (
            <button type="button" disabled={loadingOlder} onClick={() => void loadOlder()}>
              Load older entries
            </button>
          ) : null}
        </>
      )}
    </div>
  );
}

interface ChoicesProps<T extends string> {
  legend: string;
  /** Every choice, in order. */
  all: readonly T[];
  chosen: readonly T[];
  /** A choice's label. */
  words(item: T): string;
  /** Called with the choices once one is ticked or unticked (a ticked one goes last). */
  onChosen(chosen: T[]): void;
}

/** A group of checkboxes choosing some of a list (priorities, states). */
function Choices<T extends string>({ legend, all, chosen, words, onChosen }: ChoicesProps<T>) {
  return (
    <fieldset class="journal-choices">
      <legend>{legend}</legend>
      {all.map((item) => (
        <label class="check" key={item}>
          <input
            type="checkbox"
            checked={chosen.includes(item)}
            onChange={(event) => {
              const others = chosen.filter((entry) => entry !== item);
              onChosen(event.currentTarget.checked ? [...others, item] : others);
            }}
          />
          {words(item)}
        </label>
      ))}
    </fieldset>
  );
}
