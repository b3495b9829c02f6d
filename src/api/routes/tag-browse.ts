import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { Sample } from '../../tags/sample.js';
import { browseTags } from '../../tags/tag-browse.js';
import { tagPathProblem } from '../../tags/tag-path.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { sampleSchema, tagPatternParameter } from '../schemas.js';

/** Most tags on one page of `GET /api/v2/Tags`. */
export const maxBrowseLimit = 1000;
/** Tags on a page when `limit` is not given. */
export const defaultBrowseLimit = 500;

const browseQuery = z.object({
  pattern: tagPatternParameter,
  limit: z
    .string()
    .regex(/^\d{1,6}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.int().min(1).max(maxBrowseLimit))
    .optional()
    .describe(`Most tags on the page, 1 to ${maxBrowseLimit}. Default ${defaultBrowseLimit}.`),
  cursor: z
    .string()
    .max(400)
    .optional()
    .describe('`nextCursor` of the previous page; absent for the first page.'),
});

/** A page of `GET /api/v2/Tags`. */
export const tagPageSchema = z
  .object({
    tags: z.array(sampleSchema).describe('Latest samples of the matching tags, ordered by path.'),
    nextCursor: z
      .string()
      .optional()
      .describe('Pass as `cursor` for the next page; absent on the last page.'),
  })
  .meta({ id: 'TagPage' });

/**
 * The opaque cursor of a page: the last path it held, base64url. Opaque to clients, so its form
 * may change; a page continues after that path, so tags added meanwhile shift nothing.
 */
export function encodeCursor(path: string): string {
  return Buffer.from(path, 'utf8').toString('base64url');
}

/** The path a cursor continues after. @throws ValidationError naming `cursor`. */
export function decodeCursor(cursor: string): string {
  const path = /^[A-Za-z0-9_-]+$/.test(cursor)
    ? Buffer.from(cursor, 'base64url').toString('utf8')
    : '';
  if (tagPathProblem(path) !== undefined) {
    throw new ValidationError('The request query is invalid.', [
      { path: 'cursor', message: 'Not a cursor of this API: pass `nextCursor` as it came.' },
    ]);
  }
  return path;
}

/**
 * The sample with `metadata.writable` (and `writeMin`/`writeMax`) when the tag may be written,
 * so a client knows which tags offer a write without trying one.
 */
function withWriteAccess(sample: Sample, deps: ApiDeps): Sample {
  const access = deps.writer?.writeAccess(sample.fullTagId);
  if (access === undefined) return sample;
  return { ...sample, metadata: { ...sample.metadata, writable: true, ...access } };
}

/** Paged browsing of tags with their latest samples. */
export function tagBrowseRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Tags',
      operationId: 'browseTags',
      tag: 'Tags',
      summary: 'Browse tags with their latest samples, a page at a time',
      description: `The tags \`pattern\` matches, ordered by path (plain string order), at most \`limit\` (default ${defaultBrowseLimit}, at most ${maxBrowseLimit}) per page. While more match, the answer carries \`nextCursor\`: pass it as \`cursor\` for the next page. A page continues after the previous one's last path, so tags appearing meanwhile are neither skipped nor repeated. A tag that may be written (\`POST /api/v2/Tags/Write\`) carries \`metadata.writable: true\` and its \`writeMin\`/\`writeMax\` when the profile sets them.`,
      access: { kind: 'permission', permission: 'TagView' },
      query: browseQuery,
      responses: { 200: { description: 'A page of tags.', schema: tagPageSchema } },
      problems: [400],
      handle: ({ query }) => {
        const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
        const page = browseTags(
          deps.store,
          query.pattern,
          query.limit ?? defaultBrowseLimit,
          after,
        );
        return {
          tags: page.samples.map((sample) => withWriteAccess(sample, deps)),
          ...(page.nextAfter !== undefined ? { nextCursor: encodeCursor(page.nextAfter) } : {}),
        };
      },
    }),
  ];
}
