/**
 * The CSV import of a driver's tags: the file read, its problems per line, the gateway's own
 * check of the result (POST /api/v2/DriverConfigurations/Check, which saves nothing), and the
 * preview of what would change; and the CSV export of a tag list as a download.
 */

import {
  type CsvProblem,
  csvToTags,
  diffTags,
  mergeImported,
  type TagChange,
  type TagDiff,
  type TagEntry,
  tagsToCsv,
} from '../../tags/tag-csv';
import { ApiError, api } from './api-client';
import { FormError } from './form-error';

/** What an import would do, before anything is applied. */
export interface ImportPreview {
  fileName: string;
  diff: TagDiff;
  /** The tag list to save: the file's tags, with fields it has no column for kept. */
  tags: TagEntry[];
  /** Problems of the file, by line and column, then the gateway's; empty when it may apply. */
  problems: CsvProblem[];
}

/**
 * Reads a CSV file of tags and previews it against the tags the driver has now: the diff, and
 * every problem, first the file's (a cell that is not a number…), then, when the file reads
 * cleanly, what the gateway's check of the whole entry says (a coil of type float32, a
 * duplicate name), each placed at the file's line and column.
 */
export async function previewImport(
  entry: Record<string, unknown>,
  before: readonly TagEntry[],
  fileName: string,
  text: string,
  creating: boolean,
): Promise<ImportPreview> {
  const type = String(entry.type);
  const read = csvToTags(type, text);
  const diff = diffTags(type, before, read.tags, read.lines, read.columns);
  const tags = mergeImported(type, before, read.tags, read.columns);
  const problems = [...read.problems];
  if (problems.length === 0) {
    try {
      await api(`/api/v2/DriverConfigurations/Check?intent=${creating ? 'create' : 'replace'}`, {
        method: 'POST',
        body: { ...entry, tags },
      });
    } catch (error) {
      problems.push(...checkProblems(error, read.lines));
    }
  }
  return { fileName, diff, tags, problems };
}

// The check's errors at `tags[i].field` belong to the file's line of tag i; the rest (a setting
// of the driver, its name) are line 0: not the file's, but they stop the import all the same.
function checkProblems(error: unknown, lines: readonly number[]): CsvProblem[] {
  if (!(error instanceof ApiError))
    return [{ line: 0, message: 'The gateway could not be reached.' }];
  const found = error.problem.errors ?? [];
  if (found.length === 0) return [{ line: 0, message: error.message }];
  return found.map((entry) => {
    const match = /^tags\[(\d+)\](?:\.([A-Za-z]+))?/.exec(entry.path);
    if (!match) return { line: 0, column: entry.path, message: entry.message };
    const line = lines[Number(match[1])] ?? 0;
    return match[2]
      ? { line, column: match[2], message: entry.message }
      : { line, message: entry.message };
  });
}

/** Offers a driver's tags as a CSV download, with the byte-order mark Excel needs for UTF-8. */
export function downloadTagsCsv(driverName: string, type: string, tags: readonly TagEntry[]): void {
  const blob = new Blob([`\uFEFF${tagsToCsv(type, tags)}`], { type: 'text/csv;charset=utf-8' });
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `${driverName || 'driver'}-tags.csv`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Props of {@link ImportPreviewPanel}. */
export interface ImportPreviewPanelProps {
  preview: ImportPreview;
  busy: boolean;
  onApply(): void;
  onCancel(): void;
}

/** The preview: counts, the problems per line, the tags added, changed and removed. */
export function ImportPreviewPanel({ preview, busy, onApply, onCancel }: ImportPreviewPanelProps) {
  const { diff, problems } = preview;
  const blocked = problems.length > 0;
  return (
    <section class="import-preview" aria-labelledby="import-title">
      <h2 id="import-title">Import preview: {preview.fileName}</h2>
      <p role="status" data-testid="import-counts">
        {diff.added.length} added, {diff.changed.length} changed, {diff.removed.length} removed,{' '}
        {diff.unchanged.length} unchanged
      </p>
      {blocked ? (
        <>
          <FormError>
            {problems.length === 1 ? '1 problem' : `${problems.length} problems`}: nothing is
            applied until the file is corrected.
          </FormError>
          <div class="table-wrap">
            <table data-testid="import-problems">
              <caption>Problems of the file</caption>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Column</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                {problems.map((problem, index) => (
                  <tr key={index}>
                    <td>{problem.line > 0 ? problem.line : 'Settings'}</td>
                    <td>{problem.column ?? '—'}</td>
                    <td>{problem.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
      <ChangeList title="Added" changes={diff.added} testId="import-added" />
      <ChangeList title="Changed" changes={diff.changed} testId="import-changed" />
      <ChangeList title="Removed" changes={diff.removed} testId="import-removed" />
      {diff.unchanged.length > 0 ? (
        <details>
          <summary>Unchanged ({diff.unchanged.length})</summary>
          <p>{diff.unchanged.map((change) => change.name).join(', ')}</p>
        </details>
      ) : null}
      <div class="buttons">
        <button
          type="button"
          class="primary"
          disabled={blocked || busy}
          aria-describedby={blocked ? 'import-blocked' : undefined}
          onClick={onApply}
        >
          Apply the import
        </button>
        <button type="button" onClick={onCancel}>
          Discard the import
        </button>
        {blocked ? (
          <span id="import-blocked" class="muted">
            Correct the problems above and import the file again.
          </span>
        ) : null}
      </div>
    </section>
  );
}

function ChangeList({
  title,
  changes,
  testId,
}: {
  title: string;
  changes: readonly TagChange[];
  testId: string;
}) {
  if (changes.length === 0) return null;
  return (
    <div class="table-wrap">
      <table data-testid={testId}>
        <caption>
          {title} ({changes.length})
        </caption>
        <thead>
          <tr>
            <th scope="col">Tag</th>
            <th scope="col">Line</th>
            <th scope="col">What</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => (
            <tr key={change.name}>
              <th scope="row">{change.name}</th>
              <td>{change.line ?? '—'}</td>
              <td>
                {change.fields.length > 0
                  ? change.fields
                      .map(
                        (field) =>
                          `${field}: ${show(change.before?.[field])} → ${show(change.after?.[field])}`,
                      )
                      .join('; ')
                  : title === 'Removed'
                    ? 'not in the file'
                    : 'new'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function show(value: unknown): string {
  if (value === undefined) return '(empty)';
  return Array.isArray(value) ? value.join('|') : String(value);
}
