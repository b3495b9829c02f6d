/**
 * Management of collections under `/api/v2/Collections` (a
 * collection is `{ name, members }`), so a publisher can be pointed at tags without editing the
 * profile by hand. Changes are saved to the profile atomically, then the running collections
 * follow.
 *
 * Decisions: reading needs `CollectionManage` like changing does (a collection's members map
 * the plant's tag layout, which the roles without it have no use for). Deleting a collection
 * that publishers use is allowed, and the audit line names them: a running publisher re-reads
 * its collections every interval, so it goes on publishing its other collections (and logs
 * that this one is gone); at its next start it stays Off with a reason naming the missing
 * collection (spec §3.1). Refusing instead would need a 409 code errors.ts does not have.
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { CollectionNotFoundError, ConflictError, ValidationError } from '../../errors.js';
import type { ProfileService } from '../../profile/profile-service.js';
import { collectionSchema, type ProfileInput } from '../../profile/schema.js';
import type { WebhookConfig } from '../../publishers/webhook/schema.js';
import type { CollectionDefinition } from '../../tags/collections.js';
import type { ApiDeps } from '../api-deps.js';
import { configurationBodyBytes } from '../json-bodies.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const basePath = '/api/v2/Collections';
const tag = 'Collections';

/** A collection: a name and the tag paths and patterns it holds. */
export const collectionModelSchema = collectionSchema.meta({
  id: 'Collection',
  description: 'A named set of tags; members are paths or patterns (`*` one segment, `**` any).',
});

/** Body of PUT: a collection whose `name` may be left out (it is the path's). */
export const collectionReplacementSchema = collectionSchema
  .extend({ name: collectionSchema.shape.name.optional() })
  .meta({ id: 'CollectionReplacement' });

const nameParams = z.object({
  name: z.string().min(1).max(128).describe('The collection name (spaces encoded as %20).'),
});

/** Collection management (`CollectionManage`). */
export function collectionRoutes(deps: ApiDeps): RouteDefinition[] {
  // Resolved per request: the route list is also built without these services (OpenAPI).
  const services = () => {
    if (!deps.profile || !deps.collections) {
      throw new Error('The collection routes need the profile and collections services.');
    }
    return { profile: deps.profile, collections: deps.collections };
  };
  const access = { kind: 'permission', permission: 'CollectionManage' } as const;
  const found = { 200: { description: 'The collection.', schema: collectionModelSchema } };

  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: 'listCollections',
      tag,
      summary: 'List collections',
      description: 'Every collection of the profile, in profile order.',
      access,
      responses: {
        200: { description: 'The collections.', schema: z.array(collectionModelSchema) },
      },
      problems: [],
      handle: () => services().profile.current().collections,
    }),
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: 'createCollection',
      tag,
      summary: 'Create a collection',
      description:
        'Saves the collection to the profile; it resolves against the tags at once and gains tags that appear later. A name in use is 409 `already-exists`.',
      access,
      body: collectionModelSchema,
      maxBodyBytes: configurationBodyBytes,
      responses: { 201: { description: 'Created.', schema: collectionModelSchema } },
      problems: [409],
      handle: async ({ body, principal }) => {
        const { profile, collections } = services();
        await profile.update(
          (draft) => {
            const list = collectionsOf(draft);
            if (list.some((existing) => existing.name === body.name)) {
              throw new ConflictError(
                'already-exists',
                `A collection named '${body.name}' already exists.`,
              );
            }
            list.push(body);
          },
          audited('collection-created', body.name, principal),
        );
        collections.put(body);
        return body;
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}`,
      operationId: 'getCollection',
      tag,
      summary: 'Read a collection',
      access,
      params: nameParams,
      responses: found,
      problems: [404],
      handle: ({ params }) => definitionOf(services().profile, params.name),
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/{name}`,
      operationId: 'replaceCollection',
      tag,
      summary: 'Replace a collection',
      description:
        'Replaces the members. `name` may be left out; a different name is refused (400). Running publishers that use the collection publish the new members from their next interval on.',
      access,
      params: nameParams,
      body: collectionReplacementSchema,
      maxBodyBytes: configurationBodyBytes,
      responses: found,
      problems: [404],
      handle: async ({ params, body, principal }) => {
        const { profile, collections } = services();
        if (body.name !== undefined && body.name !== params.name) {
          throw new ValidationError('The request body is invalid.', [
            {
              path: 'name',
              message: `The name cannot change: it must be '${params.name}' (the path's) or left out.`,
            },
          ]);
        }
        const definition: CollectionDefinition = { name: params.name, members: body.members };
        await profile.update(
          (draft) => {
            const list = collectionsOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw new CollectionNotFoundError(params.name);
            list[index] = definition;
          },
          audited('collection-replaced', params.name, principal),
        );
        // Publishers re-read their collections every interval: nothing of theirs to reload.
        collections.put(definition);
        return definition;
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: 'deleteCollection',
      tag,
      summary: 'Delete a collection',
      description:
        'Removes the collection. Webhook publishers that use it are not changed: a running one goes on publishing its other collections (its log says this one is gone), and at its next start it stays Off with a reason naming the missing collection until a collection of that name exists again.',
      access,
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        const { profile, collections } = services();
        const affected = users(profile, params.name).map((config) => config.name);
        await profile.update(
          (draft) => {
            const list = collectionsOf(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw new CollectionNotFoundError(params.name);
            list.splice(index, 1);
          },
          { ...audited('collection-deleted', params.name, principal), publishers: affected },
        );
        collections.delete(params.name);
        context.status = 204;
      },
    }),
  ];
}

function definitionOf(profile: ProfileService, name: string): CollectionDefinition {
  const definition = profile.current().collections.find((collection) => collection.name === name);
  if (definition === undefined) throw new CollectionNotFoundError(name);
  return definition;
}

// Webhook publishers whose configuration selects the collection.
function users(profile: ProfileService, collection: string): WebhookConfig[] {
  return profile
    .current()
    .publishers.webhooks.filter((config) => config.collections.includes(collection));
}

function collectionsOf(draft: ProfileInput): CollectionDefinition[] {
  draft.collections ??= [];
  return draft.collections;
}

function audited(event: string, collection: string, principal: Principal | undefined) {
  return { event, collection, username: principal?.user.username };
}
