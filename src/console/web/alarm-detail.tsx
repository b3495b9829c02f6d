import { useEffect, useState } from 'preact/hooks';
import { acknowledge, setInService, shelve, unshelve } from './alarm-actions';
import { joinAlarmFeed, transitionTick } from './alarm-feed';
import { JournalTable } from './alarm-journal-table';
import { alarmValueText, lacking, stateWords } from './alarm-words';
import { api, encodePath, failureMessage } from './api-client';
import type { AlarmDefinition, AlertTransition, AlertView } from './api-types';
import { describedBy, Field } from './field';
import { FormError } from './form-error';
import { errorAt, fieldErrorsOf, formMessage } from './form-errors';
import { formatTime } from './format';
import { Notice } from './notice';
import { PriorityBadge } from './priority-badge';
import { href } from './router';
import { can } from './session';
import { usePoll } from './use-poll';

/** What one alarm's view reads: the alarm, its definition's shelve limit, its latest entries. */
interface AlarmFacts {
  alarm: AlertView;
  maxShelveMinutes?: number;
  recent: AlertTransition[];
}

async function loadFacts(name: string): Promise<AlarmFacts> {
  const [alarm, definition, journal] = await Promise.all([
    api<AlertView>(`/api/v2/Alerts/${encodeURIComponent(name)}`),
    api<AlarmDefinition>(`/api/v2/Alerts/Definitions/${encodeURIComponent(name)}`).catch(
      () => undefined,
    ),
    api<{ entries: AlertTransition[] }>(
      `/api/v2/Alerts/Journal?name=${encodeURIComponent(name)}&from=now-7d&limit=20`,
    ),
  ]);
  return {
    alarm,
    ...(definition?.maxShelveMinutes !== undefined
      ? { maxShelveMinutes: definition.maxShelveMinutes }
      : {}),
    recent: journal.entries,
  };
}

/**
 * One alarm: its state and reading, and the actions this account may take on it, each with a
 * comment or reason for the journal: acknowledge, shelve (for a time, or one-shot until it
 * clears) and unshelve, out of service and back. An action the account may not take is shown
 * disabled with the reason; one the state does not allow says why too. Its latest journal
 * entries follow. Read again after every transition the stream announces.
 */
export function AlarmDetail({ name }: { name: string }) {
  useEffect(() => joinAlarmFeed(), []);
  const facts = usePoll(() => loadFacts(name), 0, `${name}:${transitionTick.value}`);
  const [notice, setNotice] = useState('');
  const alarm = facts.data?.alarm;

  const done = (text: string) => {
    setNotice(text);
    facts.reload();
  };

  return (
    <div class="alarm-detail">
      <p>
        <a href={href('alarms')}>Back to the active alarms</a>
      </p>
      <FormError>{facts.error}</FormError>
      {!alarm ? (
        facts.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          <h2 class="alarm-title">
            {alarm.name} <PriorityBadge priority={alarm.priority} />
          </h2>
          <p class="alarm-message">{alarm.message}</p>
          <dl class="facts">
            <div>
              <dt>State</dt>
              <dd data-testid="alarm-state">{stateWords[alarm.state]}</dd>
            </div>
            <div>
              <dt>Value</dt>
              <dd>{alarmValueText(alarm.value, alarm.unit)}</dd>
            </div>
            <div>
              <dt>Limit</dt>
              <dd>{alarmValueText(alarm.limit, alarm.unit)}</dd>
            </div>
            <div>
              <dt>Condition</dt>
              <dd>
                {alarm.condition}
                {alarm.source ? (
                  <>
                    {' '}
                    of{' '}
                    <a href={`${href('tags')}?filter=${encodePath(alarm.source)}`}>
                      {alarm.source}
                    </a>
                  </>
                ) : null}
              </dd>
            </div>
            <div>
              <dt>Evaluated on</dt>
              <dd>
                <span class={`quality quality-${alarm.quality.toLowerCase()}`}>
                  {alarm.quality}
                </span>
                {alarm.problem ? `: ${alarm.problem}` : ' data'}
              </dd>
            </div>
            <div>
              <dt>Active since</dt>
              <dd>{alarm.active ? formatTime(alarm.activeSince) : 'Not active'}</dd>
            </div>
            <div>
              <dt>Last change</dt>
              <dd>{formatTime(alarm.changedAt)}</dd>
            </div>
            <div>
              <dt>Area</dt>
              <dd>{alarm.area ?? '—'}</dd>
            </div>
            <div>
              <dt>Severity</dt>
              <dd>{alarm.severity}</dd>
            </div>
            {alarm.shelve ? (
              <div>
                <dt>Shelved</dt>
                <dd>
                  {alarm.shelve.kind === 'OneShot' ? 'Until it clears, at most until ' : 'Until '}
                  {formatTime(alarm.shelve.until)}
                  {alarm.shelve.account ? ` by ${alarm.shelve.account}` : ''}
                  {alarm.shelve.reason ? `: ${alarm.shelve.reason}` : ''}
                </dd>
              </div>
            ) : null}
          </dl>
          <Notice>{notice}</Notice>
          <div class="alarm-actions">
            <AcknowledgeForm alarm={alarm} onDone={done} />
            {alarm.shelve ? (
              <UnshelveForm alarm={alarm} onDone={done} />
            ) : (
              <ShelveForm
                alarm={alarm}
                {...(facts.data?.maxShelveMinutes !== undefined
                  ? { maxMinutes: facts.data.maxShelveMinutes }
                  : {})}
                onDone={done}
              />
            )}
            <ServiceForm alarm={alarm} onDone={done} />
          </div>
          <h3>Latest journal entries</h3>
          <JournalTable
            entries={facts.data?.recent ?? []}
            caption={`The latest journal entries of ${alarm.name}, newest first`}
          />
          <p>
            <a href={`${href('alarms', 'journal')}?name=${encodeURIComponent(alarm.name)}`}>
              The whole journal of {alarm.name}
            </a>
          </p>
        </>
      )}
    </div>
  );
}

interface ActionProps {
  alarm: AlertView;
  onDone(text: string): void;
}

/** A disabled action's reason, under its button. */
function Why({ id, text }: { id: string; text: string }) {
  return (
    <small id={id} class="hint alarm-why">
      {text}
    </small>
  );
}

/**
 * The run of one action form: its message and whether it is under way, and the submit handler
 * that clears the message, runs the action and shows what it failed with (`failed`'s words;
 * default: the API's message).
 */
function useActionSubmit(
  run: () => Promise<void>,
  failed: (caught: unknown) => string = failureMessage,
) {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setError('');
    setBusy(true);
    try {
      await run();
    } catch (caught) {
      setError(failed(caught));
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, submit };
}

interface ActionEndProps {
  /** The form's id prefix: the reason's id is `<id>-why`. */
  id: string;
  /** Why the action cannot be done now ('' when it can): the button is disabled and says so. */
  why: string;
  busy: boolean;
  error: string;
  /** The submit button is the primary one. */
  primary?: boolean;
  /** The button's text. */
  children: string;
}

/** The end of an action form: its message, its submit button, and the reason it is disabled. */
function ActionEnd({ id, why, busy, error, primary, children }: ActionEndProps) {
  return (
    <>
      <FormError>{error}</FormError>
      <button
        type="submit"
        class={primary ? 'primary' : undefined}
        disabled={why !== '' || busy}
        aria-describedby={why ? `${id}-why` : undefined}
      >
        {children}
      </button>
      {why ? <Why id={`${id}-why`} text={why} /> : null}
    </>
  );
}

function AcknowledgeForm({ alarm, onDone }: ActionProps) {
  const [comment, setComment] = useState('');
  const allowed = can('AlertAcknowledge');
  const why = !allowed
    ? lacking.AlertAcknowledge
    : alarm.acknowledged
      ? 'Nothing to acknowledge: no occurrence of this alarm waits for it.'
      : '';
  const { error, busy, submit } = useActionSubmit(async () => {
    await acknowledge(alarm.name, comment);
    setComment('');
    onDone(`${alarm.name} acknowledged.`);
  });
  return (
    <form class="alarm-action" aria-labelledby="ack-title" onSubmit={submit}>
      <h3 id="ack-title">Acknowledge</h3>
      <Field id="ack-comment" label="Comment (kept in the journal)">
        <textarea
          id="ack-comment"
          rows={2}
          maxLength={1000}
          value={comment}
          disabled={!allowed}
          onInput={(event) => setComment(event.currentTarget.value)}
        />
      </Field>
      <ActionEnd id="ack" why={why} busy={busy} error={error} primary>
        Acknowledge
      </ActionEnd>
    </form>
  );
}

function ShelveForm({ alarm, maxMinutes, onDone }: ActionProps & { maxMinutes?: number }) {
  const [kind, setKind] = useState<'Timed' | 'OneShot'>('Timed');
  const [minutes, setMinutes] = useState('60');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const allowed = can('AlertShelve');
  const why = allowed ? '' : lacking.AlertShelve;
  const { error, busy, submit } = useActionSubmit(
    async () => {
      setErrors({});
      await shelve(
        alarm.name,
        kind === 'Timed'
          ? { kind, durationMinutes: Number(minutes), reason }
          : { kind: 'OneShot', reason },
      );
      setReason('');
      onDone(`${alarm.name} shelved.`);
    },
    (caught) => {
      setErrors(fieldErrorsOf(caught));
      return formMessage(caught, ['durationMinutes', 'reason', 'kind']);
    },
  );
  const minutesError = errorAt(errors, 'durationMinutes');
  const reasonError = errorAt(errors, 'reason');
  const minutesHint = maxMinutes ? `At most ${maxMinutes} minutes for this alarm.` : undefined;
  return (
    <form class="alarm-action" aria-labelledby="shelve-title" onSubmit={submit} noValidate>
      <h3 id="shelve-title">Shelve</h3>
      <fieldset disabled={!allowed}>
        <legend>How long</legend>
        <label class="check">
          <input
            type="radio"
            name="shelve-kind"
            checked={kind === 'Timed'}
            onChange={() => setKind('Timed')}
          />
          For a time
        </label>
        <label class="check">
          <input
            type="radio"
            name="shelve-kind"
            checked={kind === 'OneShot'}
            onChange={() => setKind('OneShot')}
          />
          Until it clears (one-shot)
        </label>
      </fieldset>
      {kind === 'Timed' ? (
        <Field id="shelve-minutes" label="Minutes" error={minutesError} hint={minutesHint}>
          <input
            id="shelve-minutes"
            type="number"
            min={1}
            {...(maxMinutes ? { max: maxMinutes } : {})}
            step="any"
            value={minutes}
            disabled={!allowed}
            aria-invalid={minutesError ? true : undefined}
            aria-describedby={describedBy('shelve-minutes', minutesError, minutesHint)}
            onInput={(event) => setMinutes(event.currentTarget.value)}
          />
        </Field>
      ) : null}
      <Field id="shelve-reason" label="Reason (kept in the journal)" error={reasonError}>
        <input
          id="shelve-reason"
          value={reason}
          maxLength={1000}
          disabled={!allowed}
          aria-invalid={reasonError ? true : undefined}
          aria-describedby={describedBy('shelve-reason', reasonError)}
          onInput={(event) => setReason(event.currentTarget.value)}
        />
      </Field>
      <ActionEnd id="shelve" why={why} busy={busy} error={error}>
        Shelve
      </ActionEnd>
    </form>
  );
}

function UnshelveForm({ alarm, onDone }: ActionProps) {
  const why = can('AlertShelve') ? '' : lacking.AlertShelve;
  const { error, busy, submit } = useActionSubmit(async () => {
    await unshelve(alarm.name);
    onDone(`${alarm.name} unshelved.`);
  });
  return (
    <form class="alarm-action" aria-labelledby="unshelve-title" onSubmit={submit}>
      <h3 id="unshelve-title">Shelved</h3>
      <p>The alarm is hidden from operators until the shelve ends.</p>
      <ActionEnd id="unshelve" why={why} busy={busy} error={error}>
        Unshelve
      </ActionEnd>
    </form>
  );
}

function ServiceForm({ alarm, onDone }: ActionProps) {
  const [comment, setComment] = useState('');
  const allowed = can('AlertManage');
  const why = allowed ? '' : lacking.AlertManage;
  const inService = !alarm.outOfService;
  const { error, busy, submit } = useActionSubmit(async () => {
    await setInService(alarm.name, !inService, comment);
    setComment('');
    onDone(inService ? `${alarm.name} is out of service.` : `${alarm.name} is back in service.`);
  });
  return (
    <form class="alarm-action" aria-labelledby="service-title" onSubmit={submit}>
      <h3 id="service-title">Service</h3>
      <Field id="service-comment" label="Comment (kept in the journal)">
        <input
          id="service-comment"
          value={comment}
          maxLength={1000}
          disabled={!allowed}
          onInput={(event) => setComment(event.currentTarget.value)}
        />
      </Field>
      <ActionEnd id="service" why={why} busy={busy} error={error}>
        {inService ? 'Take out of service' : 'Put back in service'}
      </ActionEnd>
    </form>
  );
}
