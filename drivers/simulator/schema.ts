import { z } from 'zod';
import {
  allowWritesField,
  componentNameSchema,
  relativeTagPathSchema,
  tagWriteFields,
  writeFieldIssues,
} from '../common-schema.js';

const tagBase = {
  /** Path below the component, e.g. `Line1/Temperature`. */
  name: relativeTagPathSchema,
  unit: z.string().max(32).optional(),
  description: z.string().max(256).optional(),
  ...tagWriteFields,
};

const periodSeconds = (fallback: number) =>
  z.number().positive().max(86_400).default(fallback).describe('Length of one cycle, seconds.');

const sineTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('sine'),
    amplitude: z.number().default(1),
    offset: z.number().default(0),
    periodSeconds: periodSeconds(60),
  })
  .describe('offset + amplitude · sin(2π t / period)');

const rampTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('ramp'),
    min: z.number().default(0),
    max: z.number().default(100),
    periodSeconds: periodSeconds(60),
  })
  .refine((tag) => tag.max > tag.min, { message: 'max must be greater than min', path: ['max'] })
  .describe('Rises linearly from min to max over one period, then restarts at min.');

const randomWalkTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('randomWalk'),
    start: z.number().default(0),
    step: z.number().positive().default(1).describe('Largest change per scan.'),
    min: z.number().default(-100),
    max: z.number().default(100),
  })
  .refine((tag) => tag.max > tag.min, { message: 'max must be greater than min', path: ['max'] })
  .refine((tag) => tag.start >= tag.min && tag.start <= tag.max, {
    message: 'start must lie between min and max',
    path: ['start'],
  })
  .describe('Moves by a random amount of at most step each scan, kept between min and max.');

const squareTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('square'),
    low: z.number().default(0),
    high: z.number().default(1),
    periodSeconds: periodSeconds(10),
  })
  .describe('high for the first half of each period, low for the second.');

const counterTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('counter'),
    start: z.int().default(0),
    step: z.int().default(1),
    max: z.int().optional().describe('Past this value the counter restarts at start.'),
  })
  .describe('Adds step every scan.');

const booleanTag = z
  .strictObject({ ...tagBase, kind: z.literal('boolean'), periodSeconds: periodSeconds(10) })
  .describe('false for the first half of each period, true for the second.');

const stringTag = z
  .strictObject({
    ...tagBase,
    kind: z.literal('string'),
    values: z.array(z.string().max(256)).min(1).default(['Idle', 'Running', 'Stopped']),
    periodSeconds: periodSeconds(30),
  })
  .describe('Steps through values, one per period.');

/** One simulated tag. */
export const simulatorTagSchema = z
  .discriminatedUnion('kind', [
    sineTag,
    rampTag,
    randomWalkTag,
    squareTag,
    counterTag,
    booleanTag,
    stringTag,
  ])
  .superRefine((tag, context) => {
    for (const issue of writeFieldIssues(tag)) context.addIssue({ code: 'custom', ...issue });
    if (
      (tag.kind === 'boolean' || tag.kind === 'string') &&
      (tag.writeMin !== undefined || tag.writeMax !== undefined)
    )
      context.addIssue({
        code: 'custom',
        path: [tag.writeMin !== undefined ? 'writeMin' : 'writeMax'],
        message: 'writeMin and writeMax are for numeric tags',
      });
  });

/** Profile entry of a simulator driver: changing values with no hardware, for demos and tests. */
export const simulatorDriverSchema = z.strictObject({
  type: z.literal('simulator'),
  name: componentNameSchema,
  enabled: z.boolean().default(true),
  allowWrites: allowWritesField,
  scanIntervalMs: z
    .int()
    .min(10)
    .max(3_600_000)
    .default(1000)
    .describe('How often every tag gets a new value, milliseconds.'),
  staleAfterMs: z
    .int()
    .positive()
    .optional()
    .describe(
      'A tag not updated for this long turns Stale, ms. Without it (or when it is longer) a tag ' +
        'turns Stale after 3 × scanIntervalMs, at least 1000 ms.',
    ),
  seed: z.int().optional().describe('Seed of the random walk, for repeatable runs.'),
  tags: z.array(simulatorTagSchema).min(1),
});

/** A validated simulator driver entry. */
export type SimulatorDriverConfig = z.infer<typeof simulatorDriverSchema>;
/** A validated simulated tag. */
export type SimulatorTagConfig = z.infer<typeof simulatorTagSchema>;
