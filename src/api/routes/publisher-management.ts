/**
 * The management routes of one publisher kind (webhook, MQTT): list, read, create, replace,
 * delete, start and stop under the kind's base path, with the same permissions (PublisherView /
 * PublisherManage), license gating (data relay), audit, sealing and masking for every kind.
 * Configuration changes are saved to the profile atomically (ProfileService) before the running
 * publishers follow them; secrets leave only masked. What differs between the kinds (schemas,
 * texts, where their entries live in the profile, which destination a kept credential may go
 * to) is a {@link PublisherKind}, declared by each kind's route module.
 */
import { z } from 'zod';
import type { Principal } from '../../auth/account-service.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import {
  editionPhrase as editionPhraseOf,
  featureUnavailable,
  type LicenseState,
  unlicensed,
} from '../../license/license.js';
import type { ProfileService } from '../../profile/profile-service.js';
import type { Profile, ProfileInput } from '../../profile/schema.js';
import {
  findSecrets,
  maskSecrets,
  secretMask,
  unmaskSecrets,
} from '../../profile/secret-fields.js';
import { formatPath, toFieldErrors } from '../../profile/validate-profile.js';
import type {
  PublisherManager,
  PublisherState,
  PublisherTestResult,
} from '../../publishers/publisher.js';
import { testBatchLimit } from '../../publishers/webhook/test-delivery.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

/** What differs between the publisher kinds the management routes serve. */
export interface PublisherKind<Config extends { name: string }, State extends PublisherState> {
  /** Base path of the routes, e.g. `/api/v2/Publishers/Webhooks`. */
  basePath: string;
  /**
   * The kind in words, lower case but for acronyms, e.g. `webhook publisher`: summaries
   * ("Create a webhook publisher"), the license refusal ("The webhook publisher needs …") and
   * not-found messages ("Webhook publisher 'x' does not exist.").
   */
  noun: string;
  /** The article of {@link noun} in summaries: `a` or `an`. */
  article: 'a' | 'an';
  /** The kind in operation ids, e.g. `Webhook` (`listWebhookPublishers`). */
  operationName: string;
  /** The kind in audit events, e.g. `webhook` (`webhook-publisher-created`). */
  eventName: string;
  /** The descriptions of the routes whose text is the kind's own (Delete's is shared). */
  descriptions: Record<'list' | 'create' | 'read' | 'replace' | 'start' | 'stop', string> & {
    /** The Send test route's own text; without it the kind has no `…/{name}/Test` route. */
    test?: string;
  };
  /** A whole configuration, the body of POST. */
  configSchema: z.ZodType<Config>;
  /** The body of PUT: secrets may be the mask, `name` may be left out. */
  replacementSchema: z.ZodType<{ name?: string | undefined }>;
  /** A publisher as answered: configuration (secrets masked) and state. */
  viewSchema: z.ZodType;
  /** The state Start and Stop answer. */
  stateSchema: z.ZodType;
  /** The running publishers of the kind, or undefined when the API was built without them. */
  manager(deps: ApiDeps): PublisherManager<Config, State> | undefined;
  /** The kind's entries in the profile in force, in profile order. */
  configs(profile: Profile): readonly Config[];
  /** The kind's entries in a profile being edited (the list is created when absent). */
  entries(draft: ProfileInput): { name: string }[];
  /** Why `name` cannot be created (the 409 message), or undefined when it is free. */
  nameInUse(draft: ProfileInput, name: string): string | undefined;
  /** The state of a publisher the profile has but the manager does not (yet) know. */
  offState(name: string): State;
  /**
   * Refuses a PUT that keeps a credential (sends the mask) while pointing the publisher at
   * another destination: whoever can edit a publisher must not redirect its stored secret to a
   * host of their choosing without knowing it.
   * @throws ValidationError naming each masked credential.
   */
  refuseCredentialsToNewDestination(incoming: unknown, stored: unknown): void;
}

/** What `POST …/{name}/Test` answers. */
const publisherTestResultSchema = z
  .object({
    ok: z
      .boolean()
      .describe('True when the receiver accepted the batch (webhook: 2xx; MQTT: PUBACK).'),
    httpStatus: z
      .int()
      .optional()
      .describe("Webhook: the receiver's HTTP status, when it answered."),
    pubackReasonCode: z
      .int()
      .optional()
      .describe("MQTT: the PUBACK's reason code (0: success; MQTT 3.1.1 brokers send none: 0)."),
    attempts: z
      .int()
      .min(0)
      .describe('Attempts made: 1 (a test does not retry); 0 when it could not start.'),
    durationMs: z.number().min(0).describe('From the request to the answer, ms (real time).'),
    samples: z.int().min(0).describe('Entries in the batch.'),
    at: z.string().describe('When the delivery ended, ISO 8601 UTC.'),
    error: z
      .string()
      .optional()
      .describe('Why it failed (status text, network or broker error); never a secret.'),
  })
  .meta({ id: 'PublisherTestResult' });

const nameParams = z.object({
  name: z.string().min(1).max(128).describe('The publisher name.'),
});

/** The management routes of one kind; every route needs the data relay feature (403 otherwise). */
export function publisherManagementRoutes<
  Config extends { name: string },
  State extends PublisherState,
>(deps: ApiDeps, kind: PublisherKind<Config, State>): RouteDefinition[] {
  const { basePath, noun, article, operationName, eventName, descriptions } = kind;
  const tag = 'Publishers';
  const one = `${article} ${noun}`;
  const license = deps.license ?? (() => unlicensed);
  // Resolved per request: the route list is also built without these services (OpenAPI).
  const services = () => {
    requireDataRelay(license(), `The ${noun}`);
    const publishers = kind.manager(deps);
    if (!deps.profile || !publishers) {
      throw new Error(`The ${noun} routes need the profile and ${noun}s services.`);
    }
    return { profile: deps.profile, publishers };
  };
  const licenseNote = `Needs the data relay feature (${editionPhrase()}); without it every publisher route answers 403 \`feature-unavailable\`.`;
  const describe = (text: string) => `${text}\n\n${licenseNote}`;
  const found = { 200: { description: 'The publisher.', schema: kind.viewSchema } };
  const notFound = (name: string) =>
    new NotFoundError(`${noun.charAt(0).toUpperCase()}${noun.slice(1)} '${name}' does not exist.`);
  const configOf = (profile: ProfileService, name: string): Config => {
    const config = kind.configs(profile.current()).find((existing) => existing.name === name);
    if (config === undefined) throw notFound(name);
    return config;
  };
  const view = (config: Config, publishers: PublisherManager<Config, State>) => ({
    ...maskSecrets(kind.configSchema, config),
    state: publishers.get(config.name) ?? kind.offState(config.name),
  });
  // Validates a whole configuration after its masks were filled from the stored one.
  const validated = (candidate: unknown): Config => {
    const result = kind.configSchema.safeParse(candidate);
    if (!result.success) {
      throw new ValidationError(
        'The request body is invalid.',
        result.error.issues.flatMap(toFieldErrors),
      );
    }
    rejectMasks(kind.configSchema, result.data);
    return result.data;
  };

  // Send test: only for the kinds that have one (their descriptions name it).
  const testRoute = (text: string): RouteDefinition =>
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Test`,
      operationId: `test${operationName}Publisher`,
      tag,
      summary: `Send a test batch through ${one}`,
      description: describe(
        `${text} The batch holds the current values of the publisher's collections (at most ${testBatchLimit} tags), whether the publisher runs or not; its counters, health tags and outbox are left alone. The answer never holds the destination or a credential; the audit log records who tested which publisher and the outcome.`,
      ),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: "The receiver's answer.", schema: publisherTestResultSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        const config = configOf(profile, params.name);
        if (publishers.sendTest === undefined) throw notFound(params.name);
        let result: PublisherTestResult;
        try {
          result = await publishers.sendTest(config);
        } catch (error) {
          // A file it names (caFile, a client key) could not be used: the reason is shown to the
          // caller, who may have set the path; like the publisher's own reason, it must not tell
          // what the file holds. The log has the details.
          deps.logger.warn(
            { err: error, publisher: params.name },
            `Test of ${noun} '${params.name}' could not start.`,
          );
          result = {
            ok: false,
            attempts: 0,
            durationMs: 0,
            samples: 0,
            at: new Date().toISOString(),
            error: 'A file the publisher names could not be used; the gateway log says why.',
          };
        }
        deps.audit.info(
          {
            event: `${eventName}-publisher-tested`,
            publisher: params.name,
            username: principal?.user.username,
            ok: result.ok,
            ...(result.httpStatus !== undefined ? { httpStatus: result.httpStatus } : {}),
            ...(result.pubackReasonCode !== undefined
              ? { pubackReasonCode: result.pubackReasonCode }
              : {}),
          },
          'publisher test batch sent',
        );
        return result;
      },
    });

  return [
    defineRoute({
      method: 'get',
      path: basePath,
      operationId: `list${operationName}Publishers`,
      tag,
      summary: `List ${noun}s`,
      description: describe(descriptions.list),
      access: { kind: 'permission', permission: 'PublisherView' },
      responses: {
        200: { description: 'The publishers.', schema: z.array(kind.viewSchema) },
      },
      problems: [],
      handle: () => {
        const { profile, publishers } = services();
        return kind.configs(profile.current()).map((config) => view(config, publishers));
      },
    }),
    defineRoute({
      method: 'post',
      path: basePath,
      operationId: `create${operationName}Publisher`,
      tag,
      summary: `Create ${one}`,
      description: describe(descriptions.create),
      access: { kind: 'permission', permission: 'PublisherManage' },
      body: kind.configSchema,
      responses: { 201: { description: 'Created.', schema: kind.viewSchema } },
      problems: [409],
      handle: async ({ body, principal }) => {
        const { profile, publishers } = services();
        rejectMasks(kind.configSchema, body);
        await refuseUnusableFiles(publishers, body);
        await profile.update(
          (draft) => {
            const conflict = kind.nameInUse(draft, body.name);
            if (conflict !== undefined) throw new ConflictError('already-exists', conflict);
            kind.entries(draft).push(body);
          },
          audited(`${eventName}-publisher-created`, body.name, principal),
        );
        await publishers.put(body);
        return view(body, publishers);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${basePath}/{name}`,
      operationId: `get${operationName}Publisher`,
      tag,
      summary: `Read ${one}`,
      description: describe(descriptions.read),
      access: { kind: 'permission', permission: 'PublisherView' },
      params: nameParams,
      responses: found,
      problems: [404],
      handle: ({ params }) => {
        const { profile, publishers } = services();
        return view(configOf(profile, params.name), publishers);
      },
    }),
    defineRoute({
      method: 'put',
      path: `${basePath}/{name}`,
      operationId: `replace${operationName}Publisher`,
      tag,
      summary: `Replace ${one}`,
      description: describe(descriptions.replace),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      body: kind.replacementSchema,
      responses: found,
      problems: [404],
      handle: async ({ params, body, principal }) => {
        const { profile, publishers } = services();
        if (body.name !== undefined && body.name !== params.name) {
          throw new ValidationError('The request body is invalid.', [
            {
              path: 'name',
              message: `The name cannot change: it must be '${params.name}' (the path's) or left out.`,
            },
          ]);
        }
        const incoming = { ...body, name: params.name };
        const stored = configOf(profile, params.name);
        kind.refuseCredentialsToNewDestination(incoming, stored);
        await refuseUnusableFiles(
          publishers,
          validated(unmaskSecrets(kind.configSchema, incoming, stored)),
        );
        let replaced: Config | undefined;
        await profile.update(
          (draft) => {
            const list = kind.entries(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            kind.refuseCredentialsToNewDestination(incoming, list[index]);
            const config = validated(unmaskSecrets(kind.configSchema, incoming, list[index]));
            list[index] = config;
            replaced = config;
          },
          audited(`${eventName}-publisher-replaced`, params.name, principal),
        );
        const config = replaced as Config;
        await publishers.put(config);
        return view(config, publishers);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${basePath}/{name}`,
      operationId: `delete${operationName}Publisher`,
      tag,
      summary: `Delete ${one}`,
      description: describe('Stops the publisher and removes it from the profile.'),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: { 204: { description: 'Deleted.' } },
      problems: [404],
      handle: async ({ context, params, principal }) => {
        const { profile, publishers } = services();
        await profile.update(
          (draft) => {
            const list = kind.entries(draft);
            const index = list.findIndex((existing) => existing.name === params.name);
            if (index < 0) throw notFound(params.name);
            list.splice(index, 1);
          },
          audited(`${eventName}-publisher-deleted`, params.name, principal),
        );
        await publishers.remove(params.name);
        context.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Start`,
      operationId: `start${operationName}Publisher`,
      tag,
      summary: `Start ${one}`,
      description: describe(descriptions.start),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the start.', schema: kind.stateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.start(params.name);
        deps.audit.info(
          {
            event: `${eventName}-publisher-started`,
            publisher: params.name,
            username: principal?.user.username,
            status: state.status,
            // Why it stayed Off; an MQTT publisher in Error also has a reason (the broker's
            // answer), which is its state, not the audit's. A webhook has a reason only when Off.
            ...(state.status === 'Off' && state.reason !== undefined
              ? { reason: state.reason }
              : {}),
          },
          state.status === 'Off' ? 'publisher start refused' : 'publisher started',
        );
        return state;
      },
    }),
    ...(descriptions.test === undefined ? [] : [testRoute(descriptions.test)]),
    defineRoute({
      method: 'post',
      path: `${basePath}/{name}/Stop`,
      operationId: `stop${operationName}Publisher`,
      tag,
      summary: `Stop ${one}`,
      description: describe(descriptions.stop),
      access: { kind: 'permission', permission: 'PublisherManage' },
      params: nameParams,
      responses: {
        200: { description: 'The state after the stop.', schema: kind.stateSchema },
      },
      problems: [404],
      handle: async ({ params, principal }) => {
        const { profile, publishers } = services();
        configOf(profile, params.name);
        const state = await publishers.stop(params.name);
        deps.audit.info(
          {
            event: `${eventName}-publisher-stopped`,
            publisher: params.name,
            username: principal?.user.username,
          },
          'publisher stopped',
        );
        return state;
      },
    }),
  ];
}

/**
 * Refuses when the data relay feature is not licensed.
 * @param what the publisher kind the message names, e.g. "The webhook publisher".
 * @throws ForbiddenError `feature-unavailable`, naming the editions that include it.
 */
export function requireDataRelay(license: LicenseState, what: string): void {
  const message = featureUnavailable(license, 'dataRelay', what);
  if (message !== undefined) throw new ForbiddenError(message, 'feature-unavailable');
}

/** "server or enterprise edition": the editions with the data relay feature. */
export function editionPhrase(): string {
  return editionPhraseOf('dataRelay');
}

function audited(event: string, publisher: string, principal: Principal | undefined) {
  // Names only: a configuration holds secrets, and the audit log must never.
  return { event, publisher, username: principal?.user.username };
}

// The mask stands for a stored secret; where nothing is stored it must not be saved as a value.
function rejectMasks(schema: z.ZodType, config: unknown): void {
  const masked = findSecrets(schema, config).filter((found) => found.value === secretMask);
  if (masked.length === 0) return;
  throw new ValidationError(
    'The request body is invalid.',
    masked.map((found) => ({
      path: formatPath(found.path),
      message: `'${secretMask}' keeps a stored secret, and none is stored here: send the value.`,
    })),
  );
}

/**
 * Refuses a configuration whose files (caFile, a client certificate and key) its start could not
 * use, naming each field at fault: a publisher is never saved to fail later. The files are read
 * as the publisher will read them.
 * @throws ValidationError listing every problem.
 */
async function refuseUnusableFiles<Config>(
  publishers: PublisherManager<Config, PublisherState>,
  config: Config,
): Promise<void> {
  const problems = await publishers.checkFiles(config);
  if (problems.length > 0) {
    throw new ValidationError('A file the configuration names cannot be used.', problems);
  }
}
