import { useEffect, useState } from 'preact/hooks';
import { acknowledge } from './alarm-actions';
import { alarmFeedState, alerts, alertsLoaded, joinAlarmFeed } from './alarm-feed';
import { isAnnunciated, lacking, prioritiesUrgentFirst, stateWords } from './alarm-words';
import { failureMessage } from './api-client';
import { PriorityBadge } from './priority-badge';
import { href } from './router';
import { can } from './session';

/**
 * The alarm banner under the top bar of every page: how many alarms are shown to operators, by
 * priority (word and colour), and the newest one waiting for acknowledgement, which opens on the
 * Alarms page and may be acknowledged right here. Accounts without AlertView get no banner.
 */
export function AlarmBanner() {
  if (!can('AlertView')) return null;
  return <AlarmBannerLive />;
}

function AlarmBannerLive() {
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  useEffect(() => joinAlarmFeed(), []);
  const shown = alerts.value.filter(isAnnunciated);
  const counts = prioritiesUrgentFirst
    .map((priority) => ({
      priority,
      count: shown.filter((alarm) => alarm.priority === priority).length,
    }))
    .filter((entry) => entry.count > 0);
  const newest = shown
    .filter((alarm) => !alarm.acknowledged)
    .reduce<(typeof shown)[number] | undefined>(
      (latest, alarm) =>
        latest === undefined || (alarm.changedAt ?? '') > (latest.changedAt ?? '') ? alarm : latest,
      undefined,
    );
  const unacknowledged = shown.filter((alarm) => !alarm.acknowledged).length;
  const mayAcknowledge = can('AlertAcknowledge');

  const onAcknowledge = async (name: string) => {
    setError('');
    setBusy(true);
    try {
      await acknowledge(name);
    } catch (caught) {
      setError(failureMessage(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="alarm-banner" aria-label="Alarm summary" data-testid="alarm-banner">
      <a class="alarm-counts bar-link" href={href('alarms')}>
        {!alertsLoaded.value ? (
          'Alarms: loading…'
        ) : counts.length === 0 ? (
          'No active alarms'
        ) : (
          <>
            <span>
              {shown.length} alarm{shown.length === 1 ? '' : 's'}
              {unacknowledged > 0 ? `, ${unacknowledged} unacknowledged` : ''}:
            </span>
            {counts.map(({ priority, count }) => (
              <span key={priority} class={`priority priority-${priority.toLowerCase()}`}>
                {count} {priority}
              </span>
            ))}
          </>
        )}
      </a>
      {alarmFeedState.value === 'reconnecting' ? (
        <span class="alarm-feed-lost" role="status">
          Alarm stream reconnecting: the banner may be behind.
        </span>
      ) : null}
      {newest ? (
        <div class="alarm-newest" data-alarm={newest.name}>
          <span class="visually-hidden">Newest unacknowledged: </span>
          <PriorityBadge priority={newest.priority} />
          <a class="bar-link" href={href('alarms', 'alarm', newest.name)}>
            {newest.name}: {newest.message}
          </a>
          <span class="alarm-state-word">{stateWords[newest.state]}</span>
          <button
            type="button"
            disabled={!mayAcknowledge || busy}
            aria-describedby={mayAcknowledge ? undefined : 'banner-ack-why'}
            onClick={() => void onAcknowledge(newest.name)}
          >
            Acknowledge<span class="visually-hidden"> {newest.name}</span>
          </button>
          {mayAcknowledge ? null : (
            <span id="banner-ack-why" class="alarm-why">
              {lacking.AlertAcknowledge}
            </span>
          )}
        </div>
      ) : null}
      {error ? (
        <span class="alarm-banner-error" role="alert">
          {error}
        </span>
      ) : null}
    </section>
  );
}
