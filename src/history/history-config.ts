/**
 * The `history` section of the profile: which backend keeps logged samples, what is logged,
 * for how long, and how durably (docs/history.md).
 */
import { z } from 'zod';
import { secret } from '../profile/secret-fields.js';
import { tagPathProblem } from '../tags/tag-path.js';

/** Default retention: 30 days. */
export const defaultRetentionDays = 30;
/**
 * Least bound of the in-memory buffer while the backend is slow or down, when the profile sets
 * none: samples. The bound is 10 samples per logged tag, at least this (history-logger.ts).
 */
export const defaultBufferLimit = 100_000;

const logEntrySchema = z
  .strictObject({
    collection: z
      .string()
      .min(1)
      .optional()
      .describe('Log the tags of this collection (followed as it changes).'),
    source: z
      .string()
      .min(1)
      .superRefine((text, context) => {
        const problem = tagPathProblem(text, true);
        if (problem !== undefined) {
          context.addIssue({ code: 'custom', message: `Invalid tag path or pattern: ${problem}` });
        }
      })
      .optional()
      .describe('Log the tags this path or pattern matches (`*` one segment, `**` any depth).'),
    mode: z
      .enum(['onChange', 'interval'])
      .default('onChange')
      .describe(
        '`onChange`: every write whose value or quality changed (numbers beyond the deadband). ' +
          '`interval`: the current sample every intervalSeconds.',
      ),
    deadband: z
      .number()
      .min(0)
      .optional()
      .describe(
        'onChange only: a number is logged when it differs from the last logged value by more ' +
          'than this (absolute, in the tag’s unit). A quality change always logs. Default 0.',
      ),
    intervalSeconds: z
      .int()
      .min(1)
      .max(86_400)
      .optional()
      .describe('interval only, required there: seconds between samples (1 to 86,400).'),
  })
  .superRefine((entry, context) => {
    const problem = (path: string, message: string) =>
      context.addIssue({ code: 'custom', path: [path], message });
    if ((entry.collection === undefined) === (entry.source === undefined)) {
      problem('collection', 'Name exactly one of collection or source.');
    }
    if (entry.mode === 'interval') {
      if (entry.intervalSeconds === undefined) {
        problem('intervalSeconds', 'Required when mode is interval.');
      }
      if (entry.deadband !== undefined) problem('deadband', 'Applies only to mode onChange.');
    } else if (entry.intervalSeconds !== undefined) {
      problem('intervalSeconds', 'Applies only to mode interval.');
    }
  })
  .describe('What to log: the tags of a collection or a pattern, on change or on an interval.');

const commonShape = {
  retentionDays: z
    .int()
    .min(1)
    .max(36_500)
    .default(defaultRetentionDays)
    .describe('Samples older than this many days are deleted (checked hourly). Default 30.'),
  bufferLimit: z
    .int()
    .min(1_000)
    .max(10_000_000)
    .optional()
    .describe(
      'Samples kept in memory while the backend is slow or down; beyond, the oldest are ' +
        'dropped (counted and logged). Default: 10 per logged tag (ten scans), at least 100,000.',
    ),
  log: z.array(logEntrySchema).default([]).describe('What is logged.'),
};

const sqliteHistorySchema = z.strictObject({
  backend: z.literal('sqlite').describe('Embedded SQLite file in the state directory.'),
  file: z
    .string()
    .min(1)
    .default('history.db')
    .describe('Database file; a relative path is resolved from the state directory.'),
  synchronous: z
    .enum(['off', 'normal', 'full'])
    .default('normal')
    .describe(
      'SQLite PRAGMA synchronous. `normal` (default): a tagd crash loses nothing written, a ' +
        'power cut may lose the last commits; `full`: commits survive power cuts; `off`: ' +
        'fastest, an OS crash or power cut may lose recent commits or corrupt the file.',
    ),
  ...commonShape,
});

const postgresHistorySchema = z.strictObject({
  backend: z
    .literal('postgres')
    .describe('PostgreSQL, e.g. one central history for many gateways.'),
  url: secret(
    z
      .string()
      .min(1)
      .refine((url) => /^postgres(ql)?:\/\//.test(url), {
        error: 'The history URL must be a postgres:// or postgresql:// address.',
      })
      // Inside secret(): describe() makes a new schema, and only the marked one is a secret.
      .describe(
        'Connection URL, `postgres://user:password@host:5432/db`. Sealed at rest (it may hold a ' +
          'password), masked on the way out.',
      ),
  ),
  ...commonShape,
});

/** The profile's `history` section. */
export const historyConfigSchema = z
  .discriminatedUnion('backend', [sqliteHistorySchema, postgresHistorySchema])
  .describe(
    'History: where logged samples are kept and what is logged. Absent: no history, and ' +
      'Logged query bindings answer 409 history-not-configured.',
  );

/** The `history` section, defaults applied. */
export type HistoryConfig = z.infer<typeof historyConfigSchema>;
/** One `history.log[]` entry, defaults applied. */
export type HistoryLogEntry = HistoryConfig['log'][number];
