import { z } from 'zod';
import { assertTagPath } from '../../tags/tag-path.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { sampleSchema } from '../schemas.js';

const fullTagPathParams = z.object({
  fullTagPath: z
    .string()
    .min(1)
    .describe('Tag path; its slashes may be literal or encoded as %2F.'),
});

/** Latest value of one tag. */
export function tagsRoutes(deps: ApiDeps): RouteDefinition[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Tags/Sample/{fullTagPath}',
      routerPath: '/api/v2/Tags/Sample/{*fullTagPath}',
      operationId: 'getTagSample',
      tag: 'Tags',
      summary: 'Latest sample of a tag',
      access: { kind: 'permission', permission: 'TagView' },
      params: fullTagPathParams,
      responses: { 200: { description: 'The latest sample.', schema: sampleSchema } },
      problems: [400, 404],
      handle: ({ params }) => {
        // A malformed path is named as such (400), not reported as a missing tag (404).
        assertTagPath(params.fullTagPath);
        return deps.store.require(params.fullTagPath);
      },
    }),
  ];
}
