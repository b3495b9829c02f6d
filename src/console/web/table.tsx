import type { ComponentChildren } from 'preact';

/** Props of {@link Table}. */
export interface TableProps {
  /** The table's classes (`stack-table` stacks each row at phone width); none by default. */
  class?: string;
  /** The caption, for screen readers only; absent: no caption. */
  caption?: ComponentChildren;
  /** The column headings, in order; a `false` one (Actions the account may not use) is left out. */
  columns: readonly (string | false)[];
  /** The rows. */
  children: ComponentChildren;
}

/** A data table with its column headings, in a frame that scrolls it sideways when too wide. */
export function Table({ class: className, caption, columns, children }: TableProps) {
  return (
    <div class="table-wrap">
      <table class={className}>
        {caption ? <caption class="visually-hidden">{caption}</caption> : null}
        <thead>
          <tr>
            {columns.map((column) =>
              column === false ? null : (
                <th key={column} scope="col">
                  {column}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
