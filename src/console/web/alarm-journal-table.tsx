import { alarmValueText, stateWords } from './alarm-words';
import type { AlertTransition } from './api-types';
import { PriorityBadge } from './priority-badge';
import { href } from './router';
import { Table } from './table';

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
    <Table
      class="stack-table journal-table"
      caption={caption}
      columns={['Time', 'Alarm', 'Event', 'State', 'Priority', 'Value', 'Account', 'Comment']}
    >
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
    </Table>
  );
}
