import { useSignal } from '@preact/signals';
import { cellText, cellValue, type TagColumn, type TagEntry } from '../../tags/tag-csv';
import { optionsOf } from './select-field';

/** One row of the tag table: the text of each cell, and the tag it was made from. */
export interface TagRow {
  /** Stable key of the row while it is edited. */
  id: number;
  cells: Record<string, string>;
  /** The tag as loaded: fields no column shows are sent back as they were. */
  base: TagEntry;
}

let nextId = 1;

/** The rows of a tag list, one per tag. */
export function tagRows(columns: readonly TagColumn[], tags: readonly TagEntry[]): TagRow[] {
  return tags.map((tag) => ({
    id: nextId++,
    cells: Object.fromEntries(
      columns.map((column) => [column.key, cellText(column, tag[column.key])]),
    ),
    base: tag,
  }));
}

/** An empty row. */
export function emptyRow(): TagRow {
  return { id: nextId++, cells: {}, base: {} };
}

/**
 * The tags of the rows, and the message of each cell that is not of its column's kind, by its
 * path in the entry (`tags[3].address`, as the API names it).
 */
export function rowsToTags(
  columns: readonly TagColumn[],
  rows: readonly TagRow[],
): { tags: TagEntry[]; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const tags = rows.map((row, index) => {
    const tag: TagEntry = { ...row.base };
    for (const column of columns) {
      const read = cellValue(column, row.cells[column.key] ?? '');
      if ('message' in read) {
        errors[`tags[${index}].${column.key}`] = read.message;
        continue;
      }
      if (read.value === undefined) delete tag[column.key];
      else tag[column.key] = read.value;
    }
    return tag;
  });
  return { tags, errors };
}

/** Props of {@link TagTable}. */
export interface TagTableProps {
  columns: readonly TagColumn[];
  rows: readonly TagRow[];
  onChange(rows: TagRow[]): void;
  /** Messages by path (`tags[3].address`, `tags[3]`): the API's and the table's own. */
  errors: Record<string, string>;
}

const pageSize = 100;

/**
 * A driver's tags as an editable table: one row per tag, one column per field of the driver
 * type's tag; rows added and removed; each cell's message under it. Long lists show 100 rows a
 * page.
 */
export function TagTable({ columns, rows, onChange, errors }: TagTableProps) {
  const page = useSignal(0);
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const current = Math.min(page.value, pages - 1);
  const shown = rows.slice(current * pageSize, (current + 1) * pageSize);
  const set = (id: number, key: string, text: string) =>
    onChange(
      rows.map((row) => (row.id === id ? { ...row, cells: { ...row.cells, [key]: text } } : row)),
    );
  return (
    <div class="tag-editor">
      {rows.length === 0 ? (
        <p>No tags yet: add them one by one or import a CSV file.</p>
      ) : (
        <div class="table-wrap">
          <table class="tag-table">
            <caption class="visually-hidden">Tags of the driver, one row per tag</caption>
            <thead>
              <tr>
                <th scope="col">#</th>
                {columns.map((column) => (
                  <th scope="col" key={column.key} title={column.hint}>
                    {column.key}
                  </th>
                ))}
                <th scope="col">
                  <span class="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((row, offset) => {
                const index = current * pageSize + offset;
                const rowError = errors[`tags[${index}]`];
                const tagName = row.cells.name || `row ${index + 1}`;
                return (
                  <tr key={row.id} data-row={index}>
                    <th scope="row">
                      {index + 1}
                      {rowError ? (
                        <p class="field-error" role="alert">
                          {rowError}
                        </p>
                      ) : null}
                    </th>
                    {columns.map((column) => {
                      const path = `tags[${index}].${column.key}`;
                      const error = errors[path];
                      const id = `tag-${row.id}-${column.key}`;
                      const common = {
                        id,
                        'aria-label': `${column.key} of ${tagName}`,
                        'aria-invalid': error ? true : undefined,
                        'aria-describedby': error ? `${id}-error` : undefined,
                      };
                      const text = row.cells[column.key] ?? '';
                      return (
                        <td key={column.key} class={error ? 'invalid' : undefined}>
                          {column.kind === 'enum' ? (
                            <select
                              {...common}
                              value={text}
                              onChange={(event) =>
                                set(row.id, column.key, (event.target as HTMLSelectElement).value)
                              }
                            >
                              <option value="">
                                {column.defaultValue === undefined
                                  ? '—'
                                  : `(${String(column.defaultValue)})`}
                              </option>
                              {optionsOf(column.options ?? [])}
                            </select>
                          ) : column.kind === 'boolean' ? (
                            <input
                              {...common}
                              type="checkbox"
                              checked={text === 'true'}
                              onChange={(event) =>
                                set(
                                  row.id,
                                  column.key,
                                  (event.target as HTMLInputElement).checked ? 'true' : '',
                                )
                              }
                            />
                          ) : (
                            <input
                              {...common}
                              class={
                                column.kind === 'text' || column.kind === 'list'
                                  ? 'cell-text'
                                  : 'cell-number'
                              }
                              inputMode={
                                column.kind === 'int' || column.kind === 'number'
                                  ? 'decimal'
                                  : undefined
                              }
                              value={text}
                              placeholder={
                                column.defaultValue === undefined
                                  ? undefined
                                  : String(column.defaultValue)
                              }
                              onInput={(event) =>
                                set(row.id, column.key, (event.target as HTMLInputElement).value)
                              }
                            />
                          )}
                          {error ? (
                            <p id={`${id}-error`} class="field-error">
                              {error}
                            </p>
                          ) : null}
                        </td>
                      );
                    })}
                    <td>
                      <button
                        type="button"
                        onClick={() =>
                          onChange(rows.filter((candidate) => candidate.id !== row.id))
                        }
                      >
                        Remove<span class="visually-hidden"> {tagName}</span>
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <div class="actions">
        <button
          type="button"
          onClick={() => {
            onChange([...rows, emptyRow()]);
            page.value = Math.floor(rows.length / pageSize);
          }}
        >
          Add tag
        </button>
        {pages > 1 ? (
          <nav class="actions" aria-label="Pages of tags">
            <button
              type="button"
              disabled={current === 0}
              onClick={() => (page.value = current - 1)}
            >
              Previous
            </button>
            <span>
              Page {current + 1} of {pages} ({rows.length} tags)
            </span>
            <button
              type="button"
              disabled={current >= pages - 1}
              onClick={() => (page.value = current + 1)}
            >
              Next
            </button>
          </nav>
        ) : (
          <span class="muted">{rows.length} tags</span>
        )}
      </div>
    </div>
  );
}
