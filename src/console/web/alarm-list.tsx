import { useEffect, useState } from 'preact/hooks';
import { acknowledgeMany } from './alarm-actions';
import {
  alarmFeedState,
  alerts,
  alertsError,
  alertsLoaded,
  joinAlarmFeed,
  transitionTick,
} from './alarm-feed';
import { alarmValueText, lacking, stateWords } from './alarm-words';
import { api, failureMessage } from './api-client';
import type { AlertView } from './api-types';
import { FormError } from './form-error';
import { formatTime } from './format';
import { Notice } from './notice';
import { PriorityBadge } from './priority-badge';
import { href } from './router';
import { can } from './session';
import { usePoll } from './use-poll';

/**
 * The alarms that need attention, live, sorted by priority then newest change (the API's
 * order): priority in word and colour, state in words, value and limit. Alarms waiting for an
 * acknowledgement can be selected and acknowledged together with one comment. "Show Normal
 * alarms too" lists every alarm (to take a Normal one out of service, say).
 */
export function AlarmList() {
  useEffect(() => joinAlarmFeed(), []);
  const [showAll, setShowAll] = useState(false);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState('');
  const [failure, setFailure] = useState('');
  const everything = usePoll(
    () => (showAll ? api<AlertView[]>('/api/v2/Alerts?all=true') : Promise.resolve(undefined)),
    0,
    `${showAll}:${transitionTick.value}`,
  );
  const list: readonly AlertView[] = showAll ? (everything.data ?? []) : alerts.value;
  const loaded = showAll ? everything.data !== undefined : alertsLoaded.value;
  const error = showAll ? everything.error : alertsError.value;
  const mayAcknowledge = can('AlertAcknowledge');
  const acknowledgeable = list.filter((alarm) => !alarm.acknowledged).map((alarm) => alarm.name);
  // A selection holds only alarms still waiting (one acknowledged elsewhere drops out).
  const chosen = acknowledgeable.filter((name) => selected.has(name));

  const toggle = (name: string, on: boolean) => {
    const next = new Set(selected);
    if (on) next.add(name);
    else next.delete(name);
    setSelected(next);
  };

  const onBulk = async (event: Event) => {
    event.preventDefault();
    setMessage('');
    setFailure('');
    setBusy(true);
    try {
      const { results } = await acknowledgeMany(chosen, comment);
      const done = results.filter((result) => result.status === 200).map((result) => result.name);
      const refused = results.filter((result) => result.status !== 200);
      setMessage(done.length > 0 ? `Acknowledged: ${done.join(', ')}.` : '');
      setFailure(
        refused.map((result) => `${result.name}: ${result.detail ?? result.code}`).join(' '),
      );
      setSelected(new Set());
      setComment('');
    } catch (caught) {
      setFailure(failureMessage(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="alarm-list">
      <div class="toolbar">
        <label class="check">
          <input
            type="checkbox"
            checked={showAll}
            onChange={(event) => setShowAll(event.currentTarget.checked)}
          />
          Show Normal alarms too
        </label>
        <span class={`feed${alarmFeedState.value === 'live' ? ' feed-live' : ''}`} role="status">
          {alarmFeedState.value === 'live'
            ? 'Live'
            : alarmFeedState.value === 'reconnecting'
              ? 'Reconnecting…'
              : 'Connecting…'}
        </span>
      </div>
      <form class="bulk-acknowledge" aria-label="Acknowledge selected alarms" onSubmit={onBulk}>
        <div class="field">
          <label for="bulk-comment">Comment for the selected alarms</label>
          <input
            id="bulk-comment"
            value={comment}
            maxLength={1000}
            disabled={!mayAcknowledge}
            onInput={(event) => setComment(event.currentTarget.value)}
          />
        </div>
        <button
          type="submit"
          class="primary"
          disabled={!mayAcknowledge || busy || chosen.length === 0}
          aria-describedby="bulk-why"
        >
          Acknowledge selected ({chosen.length})
        </button>
        <small id="bulk-why" class="hint">
          {!mayAcknowledge
            ? lacking.AlertAcknowledge
            : chosen.length === 0
              ? 'Select the alarms to acknowledge in the list below.'
              : `${chosen.length} selected.`}
        </small>
      </form>
      <Notice>{message}</Notice>
      <FormError>{failure}</FormError>
      <FormError>{error}</FormError>
      {!loaded ? (
        <p role="status">Loading…</p>
      ) : list.length === 0 ? (
        <p>No alarms need attention.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack-table alarm-table">
            <caption class="visually-hidden">
              {showAll ? 'Every alarm' : 'Alarms that need attention'}, by priority, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select every unacknowledged alarm"
                    disabled={!mayAcknowledge || acknowledgeable.length === 0}
                    checked={acknowledgeable.length > 0 && chosen.length === acknowledgeable.length}
                    onChange={(event) =>
                      setSelected(new Set(event.currentTarget.checked ? acknowledgeable : []))
                    }
                  />
                </th>
                <th scope="col">Alarm</th>
                <th scope="col">Priority</th>
                <th scope="col">State</th>
                <th scope="col">Value</th>
                <th scope="col">Since</th>
                <th scope="col">Area</th>
              </tr>
            </thead>
            <tbody>
              {list.map((alarm) => (
                <tr key={alarm.name} data-alarm={alarm.name}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select ${alarm.name}`}
                      disabled={!mayAcknowledge || alarm.acknowledged}
                      checked={!alarm.acknowledged && selected.has(alarm.name)}
                      onChange={(event) => toggle(alarm.name, event.currentTarget.checked)}
                    />
                  </td>
                  <th scope="row">
                    <a href={href('alarms', 'alarm', alarm.name)}>{alarm.name}</a>
                    <div class="alarm-message">{alarm.message}</div>
                    {alarm.quality !== 'Good' ? (
                      <div class="alarm-problem">
                        <span class={`quality quality-${alarm.quality.toLowerCase()}`}>
                          {alarm.quality}
                        </span>{' '}
                        {alarm.problem ?? ''}
                      </div>
                    ) : null}
                  </th>
                  <td data-label="Priority">
                    <PriorityBadge priority={alarm.priority} />
                  </td>
                  <td data-label="State">
                    <span class={`alarm-state alarm-state-${alarm.state.toLowerCase()}`}>
                      {stateWords[alarm.state]}
                    </span>
                    {alarm.shelve ? (
                      <div class="muted">
                        {alarm.shelve.kind === 'OneShot' ? 'until it clears, at most ' : 'until '}
                        {formatTime(alarm.shelve.until)}
                      </div>
                    ) : null}
                  </td>
                  <td data-label="Value">
                    {alarmValueText(alarm.value, alarm.unit)}
                    {alarm.limit !== undefined ? (
                      <span class="muted"> (limit {alarmValueText(alarm.limit, alarm.unit)})</span>
                    ) : null}
                  </td>
                  <td data-label="Since">{formatTime(alarm.activeSince ?? alarm.changedAt)}</td>
                  <td data-label="Area">{alarm.area ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
