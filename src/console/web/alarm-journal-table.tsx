import { alarmValueText, stateWords } from './alarm-words';
import type { AlertTransition } from './api-types';
import { PriorityBadge } from './priority-badge';
import { href } from './router';

/** Journal entries as a table: time, alarm, event, the state it went to, reading, who and why. */
export function JournalTable({
  entries,
  caption,
}: {
  entries: readonly AlertTransition[];
  caption: string;
}) {
  if (entries.length === 0) return <p>No journal entries.</p>;
  return (
    <div class="table-wrap">
      <table class="stack-table journal-table">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Alarm</th>
            <th scope="col">Event</th>
            <th scope="col">State</th>
            <th scope="col">Priority</th>
            <th scope="col">Value</th>
            <th scope="col">Account</th>
            <th scope="col">Comment</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry, index) => (
            <tr key={entry.seq ?? `${entry.time}-${index}`} data-event={entry.event}>
              <th scope="row" class="journal-time">
                {new Date(entry.time).toLocaleString()}
              </th>
              <td data-label="Alarm">
                <a href={href('alarms', 'alarm', entry.name)}>{entry.name}</a>
                <div class="muted">{entry.message}</div>
              </td>
              <td data-label="Event">{entry.event}</td>
              <td data-label="State">{stateWords[entry.to]}</td>
              <td data-label="Priority">
                <PriorityBadge priority={entry.priority} />
              </td>
              <td data-label="Value">
                {alarmValueText(entry.value, undefined)}
                {entry.limit !== undefined ? (
                  <span class="muted"> (limit {alarmValueText(entry.limit, undefined)})</span>
                ) : null}
              </td>
              <td data-label="Account">{entry.account ?? '—'}</td>
              <td data-label="Comment">{entry.comment ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
