/**
 * Profile entry of a derived-tag driver: tags computed from other tags by an expression
 * (src/expressions). Each expression is compiled here, with the driver's name for `{./Name}`
 * references, so a syntax error, an unknown function or a type that cannot fit is a profile
 * error at `drivers[i].tags[j].expression` with its line and column. Loops between derived tags
 * (of one driver or several) are found over the whole profile (profile-references.ts).
 */
import { z } from 'zod';
import { formatProblem } from '../../src/expressions/expression-problem.js';
import { expressionLimits } from '../../src/expressions/limits.js';
import { compileExpression } from '../../src/expressions/program.js';
import { componentNameSchema, relativeTagPathSchema } from '../common-schema.js';

/** The value types a derived tag may be declared with. */
export const derivedDataTypes = ['number', 'boolean', 'string'] as const;

/** One derived tag. */
export const derivedTagSchema = z.strictObject({
  name: relativeTagPathSchema,
  expression: z
    .string()
    .min(1)
    .max(expressionLimits.maxLength)
    .describe(
      'The formula, e.g. `scale({PLC/AI0}, 0, 27648, 0, 10)`: tags in braces, `{./Name}` for a tag of this driver; see docs/derived-tags.md.',
    ),
  dataType: z
    .enum(derivedDataTypes)
    .optional()
    .describe(
      'Type the result must have; another type makes the tag Bad. Default: what the expression gives (inferred where known).',
    ),
  unit: z.string().max(32).optional().describe('Engineering unit, e.g. `m³/h`.'),
  description: z.string().max(256).optional(),
  trigger: z
    .union([
      z.literal('change'),
      z.strictObject({
        intervalMs: z
          .int()
          .min(100)
          .max(86_400_000)
          .describe('Evaluate every this many milliseconds.'),
      }),
    ])
    .default('change')
    .describe(
      '`change` (default): evaluated in the same store batch in which an input changed, once per batch; an expression with `now()`, time-of-day or window functions is also evaluated every second. `{ "intervalMs": n }`: evaluated every n ms (and at once when an input’s quality changes).',
    ),
  deadband: z
    .number()
    .finite()
    .positive()
    .optional()
    .describe(
      'A numeric result that moved less than this from the last value written, at the same quality, is not written. Default: every change is written.',
    ),
});

/** Profile entry of a derived-tag driver. */
export const derivedDriverSchema = z
  .strictObject({
    type: z.literal('derived'),
    name: componentNameSchema,
    enabled: z.boolean().default(true),
    tags: z.array(derivedTagSchema).min(1).max(100_000),
  })
  .superRefine((driver, context) => {
    driver.tags.forEach((tag, index) => {
      const outcome = compileExpression(tag.expression, { component: driver.name });
      if (!outcome.ok) {
        context.addIssue({
          code: 'custom',
          path: ['tags', index, 'expression'],
          message: formatProblem(outcome.problem),
        });
        return;
      }
      const type = outcome.program.type;
      if (tag.dataType !== undefined && type !== 'any' && type !== tag.dataType) {
        context.addIssue({
          code: 'custom',
          path: ['tags', index, 'dataType'],
          message: `The expression gives a ${type}, not a ${tag.dataType}.`,
        });
      }
      const resultType = tag.dataType ?? type;
      if (tag.deadband !== undefined && resultType !== 'number' && resultType !== 'any') {
        context.addIssue({
          code: 'custom',
          path: ['tags', index, 'deadband'],
          message: `A deadband is for numeric tags; this one is a ${resultType}.`,
        });
      }
    });
  })
  .describe(
    'Derived tags: values computed from other tags by expressions, written back into the store like any driver’s.',
  );

/** A validated derived-tag driver entry. */
export type DerivedDriverConfig = z.infer<typeof derivedDriverSchema>;
/** A validated derived tag. */
export type DerivedTagConfig = z.infer<typeof derivedTagSchema>;
