import { z } from 'zod';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';
import { tagPatternParameter } from '../schemas.js';
import type { TagStreamHub } from '../tag-stream/tag-stream-hub.js';

const streamQuery = z.object({ pattern: tagPatternParameter });

/** Server-Sent Events of tag changes. */
export function tagStreamRoutes(_deps: ApiDeps, streams: TagStreamHub): RouteDefinition[] {
  const { limits } = streams;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Tags/Stream',
      operationId: 'streamTags',
      tag: 'Tags',
      summary: 'Follow tag changes as Server-Sent Events',
      description: [
        "A `text/event-stream` that stays open. Its first event holds the latest samples of every tag `pattern` matches (ordered by path; `[]` when none), then each batch the drivers write brings one event with the batch's matching samples, in the order written. Each event is one `data:` line holding a JSON array of samples in the `TagSample` shape (as `GET /api/v2/Tags/Sample/{fullTagPath}` answers).",
        `A client reading slower than the tags change gets, once it reads again, one event with the latest sample of each tag that changed meanwhile (coalesced, never an unbounded backlog); one whose socket accepts nothing for ${limits.stallTimeoutMs / 1000} s is disconnected. A \`: heartbeat\` comment comes every ${limits.heartbeatMs / 1000} s.`,
        `The stream ends when the caller's sign-in ends (sign-out, password change, disabled account, role change, token or session expiry: a browser's EventSource then reconnects with its refreshed cookie) and when tagd stops. Browsers use their cookie session (no CSRF header needed on GET); other clients a Bearer token. At most ${limits.maxPerAccount} streams per account and ${limits.maxTotal} in all: beyond, 429 \`stream-capacity-reached\` with Retry-After.`,
      ].join('\n\n'),
      access: { kind: 'permission', permission: 'TagView' },
      query: streamQuery,
      responses: {
        200: {
          description:
            'Events until the stream ends: `data: [<TagSample>, …]` lines, and `: heartbeat` comments.',
          mediaType: 'text/event-stream',
        },
      },
      problems: [400, 429],
      handle: ({ context, query, principal }) => {
        if (!principal) throw new Error('unreachable: route requires a token');
        streams.openStream(context, principal, query.pattern);
      },
    }),
  ];
}
