/**
 * The route area "derived tags" (`TagView`): every derived tag with its expression, inputs, last
 * evaluation and counters; and `Test`, which evaluates an expression against the live store
 * without saving anything, for an editor's live preview. Derived tags are created, changed and
 * deleted as the entries of their drivers, through the Drivers routes (`DerivedTagManage`).
 */
import { z } from 'zod';
import { ExpressionInvalidError, TooManyRequestsError } from '../../errors.js';
import { formatProblem } from '../../expressions/expression-problem.js';
import { compileExpression } from '../../expressions/program.js';
import { segmentPattern } from '../../tags/tag-path.js';
import { WriteRateLimiter } from '../../tags/write-rate-limiter.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { qualityReasonSchema, sampleSchema } from '../schemas.js';

/** Expression tests one account may run per second (a live preview sends one per keystroke pause). */
export const expressionTestsPerSecond = 10;

const tag = 'Derived tags';
const qualitySchema = z.enum(['Good', 'Stale', 'Unavailable', 'Bad']);
const valueSchema = z.union([z.number(), z.boolean(), z.string()]);
const dataTypeSchema = z
  .enum(['number', 'boolean', 'string', 'any'])
  .describe('What the expression gives as far as known before evaluation (`any`: a tag’s type).');

const evaluationSchema = z
  .object({
    utcTimestamp: z.string().describe('When it ran, ISO 8601 UTC.'),
    quality: qualitySchema,
    value: valueSchema.optional().describe('Absent for Unavailable and Bad.'),
    reason: qualityReasonSchema
      .optional()
      .describe('An input’s reason, `NotFound` (an input does not exist) or `Expression`.'),
    message: z.string().optional().describe('The input or the operation at fault.'),
  })
  .meta({ id: 'DerivedEvaluation' });

const derivedTagSchema = z
  .object({
    fullTagId: z.string(),
    driver: z.string().describe('The derived-tag driver the tag belongs to.'),
    expression: z.string(),
    inputs: z.array(z.string()).describe('The tags the expression reads.'),
    dataType: dataTypeSchema,
    trigger: z
      .union([z.literal('change'), z.object({ intervalMs: z.int() })])
      .describe('`change`, or evaluated every `intervalMs`.'),
    unit: z.string().optional(),
    description: z.string().optional(),
    deadband: z.number().optional(),
    lastEvaluation: evaluationSchema.optional().describe('Absent until the first evaluation.'),
    evaluations: z.int().describe('Evaluations since the driver started.'),
    writes: z
      .int()
      .describe('Samples written (unchanged results and changes within the deadband are not).'),
    faults: z.int().describe('Evaluations that failed in the expression (reason `Expression`).'),
  })
  .meta({ id: 'DerivedTag' });

const testBodySchema = z
  .strictObject({
    expression: z.string().min(1).max(65_536).describe('The expression to evaluate.'),
    driver: z
      .string()
      .min(1)
      .max(64)
      .regex(segmentPattern, 'may only hold letters, digits and _ . : -')
      .optional()
      .describe('The derived-tag driver `{./Name}` references resolve against. Default: none.'),
  })
  .meta({ id: 'DerivedTagTest' });

const testResultSchema = z
  .object({
    quality: qualitySchema,
    value: valueSchema.optional().describe('Absent for Unavailable and Bad.'),
    reason: qualityReasonSchema.optional(),
    message: z.string().optional(),
    dataType: dataTypeSchema,
    utcTimestamp: z.string().describe('The evaluation time, ISO 8601 UTC.'),
    inputs: z
      .array(
        z.object({
          fullTagId: z.string(),
          sample: sampleSchema
            .optional()
            .describe('The sample the evaluation read; absent when the tag does not exist.'),
        }),
      )
      .describe('Every tag the expression reads, with the sample used.'),
  })
  .meta({ id: 'DerivedTagTestResult' });

/** The derived-tag routes. */
export function derivedTagRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'TagView' } as const;
  const now = deps.now ?? Date.now;
  const limiter = new WriteRateLimiter(now, expressionTestsPerSecond);
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/DerivedTags',
      operationId: 'listDerivedTags',
      tag,
      summary: 'Every derived tag: expression, inputs, last evaluation, counters',
      description:
        'The tags of the running derived-tag drivers (type `derived` in the profile’s `drivers[]`), in profile order. Their values are read like any tag’s (`Tags/Sample`, streams, history); create, change and delete them as their driver’s entry through `/api/v2/Drivers` (`DerivedTagManage`).',
      access,
      responses: {
        200: {
          description: 'The derived tags.',
          schema: z
            .object({ derivedTags: z.array(derivedTagSchema) })
            .meta({ id: 'DerivedTagList' }),
        },
      },
      problems: [],
      handle: () => ({ derivedTags: deps.derivedTags?.list() ?? [] }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/DerivedTags/Test',
      operationId: 'testDerivedTagExpression',
      tag,
      summary: 'Evaluate an expression against the live store, saving nothing',
      description: `Answers the value and quality the expression gives now, and the sample of every tag it reads. Window functions and \`integrate\` see this one evaluation (no history). An expression that does not parse or check is 400 \`expression-invalid\`, its \`errors[0]\` holding the \`line\`, \`column\` and what was \`expected\`. At most ${expressionTestsPerSecond} tests per second and account (429 \`too-many-requests\` with Retry-After).`,
      access,
      body: testBodySchema,
      responses: { 200: { description: 'The evaluation.', schema: testResultSchema } },
      problems: [429],
      handle: ({ body, principal }) => {
        const account = principal?.user.username ?? '';
        const wait = limiter.take(account, 1);
        if (wait > 0) {
          throw new TooManyRequestsError(
            `At most ${expressionTestsPerSecond} expression tests per second; retry in ${wait} s.`,
            wait,
          );
        }
        const outcome = compileExpression(
          body.expression,
          body.driver !== undefined ? { component: body.driver } : {},
        );
        if (!outcome.ok) {
          const { problem } = outcome;
          throw new ExpressionInvalidError(`The expression is invalid: ${formatProblem(problem)}`, [
            {
              path: 'expression',
              message: problem.message,
              line: problem.line,
              column: problem.column,
              ...(problem.expected !== undefined ? { expected: problem.expected } : {}),
            },
          ]);
        }
        const { program } = outcome;
        const at = now();
        // One read per input, kept: the answer shows exactly the samples the evaluation used.
        const samples = program.references.map((id) => deps.store.get(id));
        const result = program.evaluate({ now: at, read: (index) => samples[index] });
        return {
          ...result,
          dataType: program.type,
          utcTimestamp: new Date(at).toISOString(),
          inputs: program.references.map((fullTagId, index) => {
            const sample = samples[index];
            return sample ? { fullTagId, sample } : { fullTagId };
          }),
        };
      },
    }),
  ];
}
