/**
 * A driver's tag list as CSV, the way Kepware and Ignition users keep tags: one row per tag
 * under a header row of column names (the tag fields of the driver type, see
 * {@link tagColumns}). Quoting per RFC 4180; a UTF-8 byte-order mark (what Excel writes) and a
 * `;` delimiter (Excel in locales with a decimal comma) are accepted on import. Also the diff
 * between the tags a driver has and the tags a CSV file would give it, for the import preview.
 *
 * Pure (no DOM, no I/O): the console and the API (`GET /api/v2/Drivers/{name}/Tags.csv`) share it.
 */

/** How a column's text becomes a value. Empty text always means "not set". */
export type ColumnKind = 'text' | 'int' | 'number' | 'boolean' | 'enum' | 'list';

/** One CSV column: a field of the driver type's tag. */
export interface TagColumn {
  /** The tag field, also the CSV header (matched without regard to case). */
  key: string;
  kind: ColumnKind;
  /** The allowed values of an `enum` column. */
  options?: readonly string[];
  /** The value the gateway assumes when the cell is empty, for the diff. */
  defaultValue?: unknown;
  /** What the column holds, for the table's header tooltip and the docs. */
  hint: string;
}

const writeColumns: TagColumn[] = [
  {
    key: 'writable',
    kind: 'boolean',
    hint: 'true lets TagWrite holders write it (with allowWrites).',
  },
  { key: 'writeMin', kind: 'number', hint: 'Least value a client may write (engineering units).' },
  { key: 'writeMax', kind: 'number', hint: 'Greatest value a client may write.' },
];

/** The tag columns of each driver type that has a tag list (CAN tags come from its DBC file). */
export const tagColumns: Readonly<Record<string, readonly TagColumn[]>> = {
  modbus: [
    { key: 'name', kind: 'text', hint: 'Tag path below the driver, e.g. Line1/Temperature.' },
    {
      key: 'table',
      kind: 'enum',
      options: ['coil', 'discreteInput', 'inputRegister', 'holdingRegister'],
      hint: 'Data table.',
    },
    { key: 'address', kind: 'int', hint: '0-based address in the table (40001 is 0).' },
    {
      key: 'type',
      kind: 'enum',
      options: [
        'bool',
        'bit',
        'int16',
        'uint16',
        'int32',
        'uint32',
        'int64',
        'uint64',
        'float32',
        'float64',
        'string',
      ],
      hint: 'Data type; empty: bool for bit tables, uint16 for registers.',
    },
    { key: 'bit', kind: 'int', hint: 'Bit 0–15 of the register, for type bit.' },
    { key: 'length', kind: 'int', hint: 'Registers of a string (2 characters each).' },
    {
      key: 'order',
      kind: 'enum',
      options: ['ABCD', 'CDAB', 'BADC', 'DCBA'],
      defaultValue: 'ABCD',
      hint: 'Byte/word order: ABCD big-endian, CDAB word-swapped.',
    },
    { key: 'unitId', kind: 'int', hint: "Unit id; empty: the driver's." },
    { key: 'scale', kind: 'number', defaultValue: 1, hint: 'value = raw × scale + offset.' },
    { key: 'offset', kind: 'number', defaultValue: 0, hint: 'Added after scaling.' },
    { key: 'unit', kind: 'text', hint: 'Engineering unit, e.g. °C.' },
    { key: 'description', kind: 'text', hint: 'Free text, up to 256 characters.' },
    { key: 'pollIntervalMs', kind: 'int', hint: "Poll group, ms; empty: the driver's." },
    { key: 'deadband', kind: 'number', hint: 'Report a change only beyond this (scaled units).' },
    ...writeColumns,
  ],
  opcua: [
    { key: 'name', kind: 'text', hint: 'Tag path below the driver, e.g. Line1/Temperature.' },
    { key: 'nodeId', kind: 'text', hint: 'The variable, e.g. ns=2;s=Line1.Temperature.' },
    { key: 'samplingIntervalMs', kind: 'int', hint: "Sampling interval, ms; empty: the driver's." },
    {
      key: 'publishingIntervalMs',
      kind: 'int',
      hint: "Publishing interval, ms; empty: the driver's.",
    },
    { key: 'deadband', kind: 'number', hint: 'Absolute deadband; empty: every change.' },
    { key: 'unit', kind: 'text', hint: 'Engineering unit, e.g. °C.' },
    { key: 'description', kind: 'text', hint: 'Free text, up to 256 characters.' },
    ...writeColumns,
  ],
  simulator: [
    { key: 'name', kind: 'text', hint: 'Tag path below the driver, e.g. Line1/Temperature.' },
    {
      key: 'kind',
      kind: 'enum',
      options: ['sine', 'ramp', 'randomWalk', 'square', 'counter', 'boolean', 'string'],
      hint: 'Waveform.',
    },
    { key: 'unit', kind: 'text', hint: 'Engineering unit.' },
    { key: 'description', kind: 'text', hint: 'Free text.' },
    ...writeColumns,
    { key: 'amplitude', kind: 'number', hint: 'sine.' },
    { key: 'offset', kind: 'number', hint: 'sine.' },
    { key: 'periodSeconds', kind: 'number', hint: 'sine, ramp, square, boolean, string.' },
    { key: 'min', kind: 'number', hint: 'ramp, randomWalk.' },
    { key: 'max', kind: 'number', hint: 'ramp, randomWalk, counter.' },
    { key: 'start', kind: 'number', hint: 'randomWalk, counter.' },
    { key: 'step', kind: 'number', hint: 'randomWalk, counter.' },
    { key: 'low', kind: 'number', hint: 'square.' },
    { key: 'high', kind: 'number', hint: 'square.' },
    { key: 'values', kind: 'list', hint: 'string: the values, separated by |.' },
  ],
};

/** A tag as the Drivers API holds it: field name → value. */
export type TagEntry = Record<string, unknown>;

/** A problem of one cell (or one line, or the whole file) of an imported CSV. */
export interface CsvProblem {
  /** 1-based line of the file where the record starts (the header is line 1). */
  line: number;
  /** The column's header, when the problem is one cell's. */
  column?: string;
  message: string;
}

/** A parsed CSV file: its records and the line each starts on. */
export interface CsvTable {
  records: string[][];
  /** `lines[i]` is the 1-based line where `records[i]` starts. */
  lines: number[];
  /** The delimiter found in the header: `,` unless the header has `;` and no `,`. */
  delimiter: ',' | ';';
  problems: CsvProblem[];
}

/**
 * Parses CSV text per RFC 4180: fields split by the delimiter, records by CRLF or LF, fields in
 * double quotes may hold the delimiter, line breaks and `""` for a quote. A leading byte-order
 * mark is dropped. A quote inside an unquoted field, text after a closing quote, or an
 * unterminated quote is a problem at its line (the record is still returned).
 */
export function parseCsv(input: string): CsvTable {
  const text = input.startsWith('\uFEFF') ? input.slice(1) : input;
  const firstLine = text.slice(0, text.search(/\r?\n|$/));
  const delimiter = !firstLine.includes(',') && firstLine.includes(';') ? ';' : ',';
  const records: string[][] = [];
  const lines: number[] = [];
  const problems: CsvProblem[] = [];
  let line = 1;
  let index = 0;
  while (index < text.length) {
    const start = line;
    const record: string[] = [];
    let field = '';
    let ended = false;
    while (!ended) {
      if (text[index] === '"') {
        // A quoted field, up to the lone closing quote.
        index++;
        let closed = false;
        while (index < text.length) {
          const char = text[index] as string;
          if (char === '"') {
            if (text[index + 1] === '"') {
              field += '"';
              index += 2;
              continue;
            }
            index++;
            closed = true;
            break;
          }
          if (char === '\n') line++;
          field += char;
          index++;
        }
        if (!closed) problems.push({ line: start, message: 'A quoted field is never closed.' });
        const after = text[index];
        if (after !== undefined && after !== delimiter && after !== '\r' && after !== '\n') {
          problems.push({
            line,
            message: 'Text after a closing quote: a quote inside a field is written "".',
          });
          while (index < text.length && !isBreakOrDelimiter(text, index, delimiter)) {
            field += text[index];
            index++;
          }
        }
      } else {
        while (index < text.length && !isBreakOrDelimiter(text, index, delimiter)) {
          if (text[index] === '"') {
            problems.push({
              line,
              message: 'A quote inside an unquoted field: quote the field and write the quote "".',
            });
          }
          field += text[index];
          index++;
        }
      }
      record.push(field);
      field = '';
      if (text[index] === delimiter) {
        index++;
        continue;
      }
      // End of record: CRLF, LF, or the end of the text.
      if (text[index] === '\r') index++;
      if (text[index] === '\n') index++;
      line++;
      ended = true;
    }
    records.push(record);
    lines.push(start);
  }
  return { records, lines, delimiter, problems };
}

function isBreakOrDelimiter(text: string, index: number, delimiter: string): boolean {
  const char = text[index];
  return char === delimiter || char === '\n' || (char === '\r' && text[index + 1] === '\n');
}

/** Writes records as RFC 4180 CSV: CRLF line ends, fields quoted when they need it. */
export function serializeCsv(records: readonly (readonly string[])[]): string {
  return `${records.map((record) => record.map(quoteField).join(',')).join('\r\n')}\r\n`;
}

function quoteField(field: string): string {
  return /[",\r\n;]|^\s|\s$/.test(field) ? `"${field.replaceAll('"', '""')}"` : field;
}

// Text a spreadsheet would run as a formula: = + - @, tab or carriage return first.
const formulaStart = /^[=+\-@\t\r]/;

/**
 * The text of a value in a cell of a column (empty for not set). Text that a spreadsheet would
 * run as a formula gets a leading apostrophe (OWASP "CSV injection"), which {@link cellValue}
 * takes off again: a description typed as `=HYPERLINK(…)` stays text on the way through Excel.
 */
export function cellText(column: TagColumn, value: unknown): string {
  if (value === undefined || value === null) return '';
  const text =
    column.kind === 'list' && Array.isArray(value) ? value.map(String).join('|') : String(value);
  return (column.kind === 'text' || column.kind === 'list') && formulaStart.test(text)
    ? `'${text}`
    : text;
}

/**
 * Reads a cell's text as the column's value: undefined for empty text, else the value or a
 * message saying what the column takes.
 */
export function cellValue(
  column: TagColumn,
  raw: string,
): { value: unknown } | { message: string } {
  const trimmed = raw.trim();
  if (trimmed === '') return { value: undefined };
  // The apostrophe cellText put before formula-like text goes again.
  const text =
    (column.kind === 'text' || column.kind === 'list') &&
    trimmed.startsWith("'") &&
    formulaStart.test(trimmed.slice(1))
      ? trimmed.slice(1)
      : trimmed;
  switch (column.kind) {
    case 'text':
      // Text keeps its inner spaces; only the padding a spreadsheet may add goes.
      return { value: text };
    case 'int':
      return /^[+-]?\d+$/.test(text) && Number.isSafeInteger(Number(text))
        ? { value: Number(text) }
        : { message: `'${clip(text)}' is not a whole number.` };
    case 'number': {
      const number = Number(text);
      return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) && Number.isFinite(number)
        ? { value: number }
        : { message: `'${clip(text)}' is not a number (use a decimal point: 1.5).` };
    }
    case 'boolean': {
      const lower = text.toLowerCase();
      if (['true', 'yes', '1'].includes(lower)) return { value: true };
      if (['false', 'no', '0'].includes(lower)) return { value: false };
      return { message: `'${clip(text)}' is not true or false.` };
    }
    case 'enum': {
      const found = column.options?.find((option) => option.toLowerCase() === text.toLowerCase());
      return found !== undefined
        ? { value: found }
        : { message: `'${clip(text)}' is not one of ${column.options?.join(', ')}.` };
    }
    case 'list':
      return { value: text.split('|').map((part) => part.trim()) };
  }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** The CSV of a driver's tags: the header of every column of its type, one row per tag. */
export function tagsToCsv(driverType: string, tags: readonly TagEntry[]): string {
  const columns = columnsOf(driverType);
  return serializeCsv([
    columns.map((column) => column.key),
    ...tags.map((tag) => columns.map((column) => cellText(column, tag[column.key]))),
  ]);
}

/** The tag columns of a driver type. @throws Error for a type without a tag list. */
export function columnsOf(driverType: string): readonly TagColumn[] {
  const columns = tagColumns[driverType];
  if (!columns) throw new Error(`A ${driverType} driver has no tag list to edit as CSV.`);
  return columns;
}

/** What an imported CSV gives: the tags, the line of each, and every problem found. */
export interface CsvTags {
  tags: TagEntry[];
  /** `lines[i]` is the line of `tags[i]`. */
  lines: number[];
  /** The columns the file has (its header, known columns only). */
  columns: string[];
  problems: CsvProblem[];
}

/**
 * Reads a CSV file of a driver type's tags. The header names the columns (any order, any case,
 * any subset that includes `name`); a column the type does not have, a repeated column, a cell
 * that is not of its column's kind, a record with more fields than the header, and a repeated
 * tag name are problems at their line. Blank lines are skipped.
 */
export function csvToTags(driverType: string, text: string): CsvTags {
  const columns = columnsOf(driverType);
  const table = parseCsv(text);
  const problems = [...table.problems];
  const tags: TagEntry[] = [];
  const lines: number[] = [];
  const [header, ...records] = table.records;
  if (!header || header.every((cell) => cell.trim() === '')) {
    problems.push({ line: 1, message: 'The file is empty: it needs a header row.' });
    return { tags, lines, columns: [], problems };
  }
  const headerColumns: (TagColumn | undefined)[] = header.map((cell) => {
    const found = columns.find((column) => column.key.toLowerCase() === cell.trim().toLowerCase());
    if (!found) {
      problems.push({
        line: 1,
        column: cell,
        message: `Unknown column '${clip(cell)}'; a ${driverType} tag has: ${columns.map((column) => column.key).join(', ')}.`,
      });
    }
    return found;
  });
  headerColumns.forEach((column, index) => {
    if (column && headerColumns.indexOf(column) !== index)
      problems.push({ line: 1, column: column.key, message: 'The column appears twice.' });
  });
  if (!headerColumns.some((column) => column?.key === 'name'))
    problems.push({ line: 1, column: 'name', message: 'The header has no name column.' });
  const firstLineOf = new Map<string, number>();
  records.forEach((record, index) => {
    const line = table.lines[index + 1] as number;
    if (record.every((cell) => cell.trim() === '')) return;
    if (record.length > header.length) {
      problems.push({
        line,
        message: `${record.length} fields, more than the header's ${header.length} (a delimiter inside a field needs quotes).`,
      });
    }
    const tag: TagEntry = {};
    headerColumns.forEach((column, cellIndex) => {
      if (!column) return;
      const read = cellValue(column, record[cellIndex] ?? '');
      if ('message' in read) problems.push({ line, column: column.key, message: read.message });
      else if (read.value !== undefined) tag[column.key] = read.value;
    });
    const name = typeof tag.name === 'string' ? tag.name : undefined;
    if (name === undefined) {
      problems.push({ line, column: 'name', message: 'Every tag needs a name.' });
    } else {
      const first = firstLineOf.get(name);
      if (first !== undefined)
        problems.push({
          line,
          column: 'name',
          message: `'${clip(name)}' is on line ${first} already.`,
        });
      else firstLineOf.set(name, line);
    }
    tags.push(tag);
    lines.push(line);
  });
  problems.sort((a, b) => a.line - b.line);
  const present = headerColumns.flatMap((column) => (column ? [column.key] : []));
  return { tags, lines, columns: present, problems };
}

/** One tag in a {@link TagDiff}. */
export interface TagChange {
  name: string;
  before?: TagEntry;
  after?: TagEntry;
  /** The fields that differ (changed tags). */
  fields: string[];
  /** Line of the tag in the imported file (added, changed, unchanged). */
  line?: number;
}

/** What an import would change, tag by tag, by name. */
export interface TagDiff {
  added: TagChange[];
  changed: TagChange[];
  removed: TagChange[];
  unchanged: TagChange[];
}

/**
 * Compares the tags a driver has with those an import gives it, by name. A field left empty
 * equals the gateway's default for it (`order` ABCD, `scale` 1, `offset` 0). A column the file
 * does not have (`covered`, default: every column of the type) changes nothing: the stored
 * value stays. Tags missing from the file are removed: the file is the whole tag list.
 */
export function diffTags(
  driverType: string,
  before: readonly TagEntry[],
  after: readonly TagEntry[],
  lines: readonly number[] = [],
  covered?: readonly string[],
): TagDiff {
  const columns = columnsOf(driverType);
  const known = new Set(covered ?? columns.map((column) => column.key));
  const diff: TagDiff = { added: [], changed: [], removed: [], unchanged: [] };
  const old = new Map(before.map((tag) => [String(tag.name), tag]));
  const seen = new Set<string>();
  after.forEach((tag, index) => {
    const name = String(tag.name);
    seen.add(name);
    const line = lines[index];
    const previous = old.get(name);
    const at = line === undefined ? {} : { line };
    if (!previous) {
      diff.added.push({ name, after: tag, fields: [], ...at });
      return;
    }
    const keys = new Set([...Object.keys(previous), ...Object.keys(tag)]);
    const fields = [...keys].filter((key) => {
      const column = columns.find((candidate) => candidate.key === key);
      const fallback = column?.defaultValue;
      const a = previous[key] ?? fallback;
      const b = tag[key] ?? fallback;
      // A field the CSV has no column for is kept from the stored tag, not changed.
      if (!known.has(key)) return false;
      return JSON.stringify(a) !== JSON.stringify(b);
    });
    const entry = { name, before: previous, after: tag, fields, ...at };
    (fields.length > 0 ? diff.changed : diff.unchanged).push(entry);
  });
  for (const tag of before) {
    const name = String(tag.name);
    if (!seen.has(name)) diff.removed.push({ name, before: tag, fields: [] });
  }
  return diff;
}

/**
 * The tag list to send after an import: each tag as the file gives it, keeping the fields the
 * file has no column for (`covered`, default: every column of the type) from the stored tag of
 * the same name.
 */
export function mergeImported(
  driverType: string,
  before: readonly TagEntry[],
  after: readonly TagEntry[],
  covered?: readonly string[],
): TagEntry[] {
  const known = new Set(covered ?? columnsOf(driverType).map((column) => column.key));
  const old = new Map(before.map((tag) => [String(tag.name), tag]));
  return after.map((tag) => {
    const previous = old.get(String(tag.name));
    if (!previous) return tag;
    const kept = Object.fromEntries(Object.entries(previous).filter(([key]) => !known.has(key)));
    return { ...kept, ...tag };
  });
}
