import type { ComponentChildren } from 'preact';
import type { PublisherState } from './api-types';
import { Table } from './table';

/** Props of {@link PublisherTable}. */
export interface PublisherTableProps {
  /** The table's caption, for screen readers (`Webhook publishers`). */
  caption: string;
  /** The heading of the column that says where the publisher sends (`Destination`, `Broker`). */
  target: string;
  /** The account may start, stop and edit: the table has an Actions column. */
  manage: boolean;
  /** The rows: name, status, health, last delivery, target and (with `manage`) actions. */
  children: ComponentChildren;
}

/** A table of publishers of one kind, one row each, that stacks on a narrow screen. */
export function PublisherTable({ caption, target, manage, children }: PublisherTableProps) {
  return (
    <Table
      class="stack-table"
      caption={caption}
      columns={['Name', 'Status', 'Health', 'Last delivery', target, manage && 'Actions']}
    >
      {children}
    </Table>
  );
}

const statusClass: Record<PublisherState['status'], string> = {
  On: 'ok',
  Off: 'off',
  Error: 'bad',
};

/** A publisher's Status cell: On, Off or Error, and the reason it gives. */
export function PublisherStatusCell({ state }: { state: PublisherState }) {
  return (
    <td data-label="Status">
      <span class={`status status-${statusClass[state.status]}`} data-testid="publisher-status">
        {state.status}
      </span>
      {state.reason ? <div class="muted">{state.reason}</div> : null}
    </td>
  );
}
