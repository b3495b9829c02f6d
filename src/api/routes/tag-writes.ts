import type { Context } from 'koa';
import { z } from 'zod';
import { maxWritesPerRequest, type TagWriteItem, TagWriter } from '../../tags/tag-writer.js';
import type { ApiDeps } from '../api-deps.js';
import { parseWithNumberTexts } from '../json-number-texts.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const writeItemSchema = z
  .strictObject({
    fullTagId: z.string().min(1).max(1024).describe('The tag to write, e.g. `Boiler1/Setpoint`.'),
    value: z
      .union([z.number(), z.boolean(), z.string().max(4096)], {
        error: (issue) =>
          typeof issue.input === 'number'
            ? 'NaN and infinities cannot be written.'
            : 'Must be a number, boolean or string.',
      })
      .describe(
        'The value in engineering units: a number, a boolean (coils, bits, booleans) or a ' +
          'string. An int64 or uint64 at or beyond ±2^53 goes as its decimal string ' +
          '(`"12345678901234567"`), since a JSON number cannot hold it exactly; for an integer ' +
          'type a number is refused unless it names its integer exactly as written ' +
          '(`9007199254740993` and `1.0000000000000001` are refused, not rounded).',
      ),
  })
  .meta({ id: 'TagWrite' });

const writeRequestSchema = z
  .strictObject({
    writes: z
      .array(writeItemSchema)
      .min(1)
      .max(maxWritesPerRequest)
      .describe(`1 to ${maxWritesPerRequest} writes, carried out in this order per device.`),
  })
  .meta({ id: 'TagWriteRequest' });

const writeResultSchema = z
  .object({
    fullTagId: z.string(),
    status: z
      .enum(['Good', 'Bad', 'Uncertain'])
      .describe(
        '`Good`: the device acknowledged the write. `Bad`: refused, or never sent (nothing ' +
          'changed). `Uncertain`: sent without an answer; the device may or may not have applied ' +
          'it, and it is never re-sent.',
      ),
    reason: z
      .string()
      .optional()
      .describe(
        '`OutcomeUnknown` (Uncertain), `Disconnected`, `Timeout`, `DeviceException`, ' +
          '`NotSupported`, or an OPC UA status name such as `BadNotWritable`.',
      ),
    message: z.string().optional().describe('Human-readable detail.'),
  })
  .meta({ id: 'TagWriteResult' });

const writeResponseSchema = z
  .object({
    results: z.array(writeResultSchema).describe('One result per write, in request order.'),
  })
  .meta({ id: 'TagWriteResponse' });

/** Writing tag values to the devices, through the TagWriter only. */
export function tagWriteRoutes(deps: ApiDeps): RouteDefinition[] {
  const writer =
    deps.writer ??
    new TagWriter({
      store: deps.store,
      audit: deps.audit,
      logger: deps.logger,
      now: deps.now ?? Date.now,
    });
  return [
    defineRoute({
      method: 'post',
      path: '/api/v2/Tags/Write',
      operationId: 'writeTags',
      tag: 'Tags',
      summary: 'Write tag values to the devices',
      description:
        'Writes each value to the device that owns the tag and answers once every device has ' +
        'acknowledged or refused its writes; the new values then arrive through the normal ' +
        'read path (a read follows each Good write at once). Every item is checked before ' +
        'anything is sent: a tag that does not exist or is not writable (the profile marks a tag ' +
        '`writable` and its driver `allowWrites`), a value of the wrong type, outside ' +
        '`writeMin`/`writeMax`, or NaN/infinite refuses the whole request with 400 ' +
        '`validation-failed`, `errors` naming each item (`writes[i].fullTagId`, ' +
        '`writes[i].value`), and nothing is written. Each account may write 20 values per ' +
        'second (items, not requests; `security.writesPerSecond`): beyond, 429 ' +
        '`write-rate-exceeded` with Retry-After, and nothing is written. A write is never ' +
        'retried: one whose answer did not come is `Uncertain` (`OutcomeUnknown`). Every item ' +
        'written or refused by a check is audited; a request refused by the rate limit, by this ' +
        'schema or for a body that is not JSON leaves one audit line.',
      access: { kind: 'permission', permission: 'TagWrite' },
      // Refused before the writer saw the items: audited as one line for the request.
      onInvalid: ({ context, principal, error }) =>
        writer.refusedRequest(
          principal?.user.username ?? '',
          error,
          (context.request as { body?: unknown }).body,
          context.request.length,
        ),
      body: writeRequestSchema,
      responses: {
        200: { description: 'One result per write, in order.', schema: writeResponseSchema },
      },
      problems: [400, 429],
      handle: async ({ body, principal, context }) => ({
        results: await writer.write(
          principal?.user.username ?? '',
          withNumberTexts(body.writes, context),
        ),
      }),
    }),
  ];
}

/**
 * The items with the JSON text of each number value, read from the raw body: JSON parsing
 * rounded the numbers, and the integer checks must see what the client wrote.
 */
function withNumberTexts(items: TagWriteItem[], context: Context): TagWriteItem[] {
  if (!items.some((item) => typeof item.value === 'number')) return items;
  const raw = (context.request as { rawBody?: unknown }).rawBody;
  if (typeof raw !== 'string') return items;
  const texts = (parseWithNumberTexts(raw) as { writes: { value: unknown }[] }).writes;
  return items.map((item, index) => {
    const text = texts[index]?.value;
    return typeof item.value === 'number' && typeof text === 'string'
      ? { ...item, numberText: text }
      : item;
  });
}
