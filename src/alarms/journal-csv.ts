/**
 * The journal as CSV (RFC 4180), for spreadsheets: one header line, one line per transition,
 * CRLF line ends, fields quoted when they hold a comma, quote or line break. A text field that a
 * spreadsheet would run as a formula (starting with = + - @, tab or carriage return) gets a
 * leading apostrophe: a comment typed by an operator must not become a formula on someone's
 * desktop (OWASP "CSV injection").
 */
import type { JournalEntry } from './alarm-journal.js';

const columns = [
  'seq',
  'time',
  'name',
  'event',
  'from',
  'to',
  'active',
  'acknowledged',
  'value',
  'limit',
  'account',
  'comment',
  'priority',
  'severity',
  'area',
  'message',
] as const;

/** The CSV text of the entries, header first. */
export function journalCsv(entries: readonly JournalEntry[]): string {
  const lines = [columns.join(',')];
  for (const entry of entries) {
    lines.push(
      [
        String(entry.seq),
        new Date(entry.time).toISOString(),
        text(entry.name),
        entry.event,
        entry.from,
        entry.to,
        String(entry.active),
        String(entry.acknowledged),
        value(entry.value),
        value(entry.limit),
        text(entry.account),
        text(entry.comment),
        entry.priority,
        String(entry.severity),
        text(entry.area),
        text(entry.message),
      ].join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

function value(field: unknown): string {
  if (field === undefined) return '';
  // Numbers and booleans as written; a string value (a quality, a state text) is text.
  return typeof field === 'string' ? text(field) : String(field);
}

function text(field: string | undefined): string {
  if (field === undefined) return '';
  const safe = /^[=+\-@\t\r]/.test(field) ? `'${field}` : field;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
