/**
 * The profile as a whole (`ProfileManage`, Administrators): `GET /api/v2/Profile` reads the
 * profile in force with every secret masked, `POST /api/v2/Profile/Reload` re-reads the profile
 * file and restarts only what changed, like `systemctl reload tagd`.
 *
 * Decision: a permission of its own rather than UserManage or DriverManage, because the profile
 * holds every section (listeners, publishers, history), and reading it whole is as sensitive
 * as changing any of them; only Administrators hold it.
 */
import { z } from 'zod';
import { profileSchema } from '../../profile/schema.js';
import { maskSecrets, secretMask } from '../../profile/secret-fields.js';
import type { ProfileReloader } from '../../reload/profile-reloader.js';
import type { ApiDeps } from '../api-deps.js';
import { defineRoute, type RouteDefinition } from '../route.js';

const tag = 'Profile';

/** What a reload (or a driver change) did, component by component. */
export const reloadSummarySchema = z
  .object({
    started: z
      .array(z.string())
      .describe(
        'Components the new profile added, now running: `drivers/<name>`, `collections/<name>`, `publishers.webhooks/<name>`, `publishers.mqtt/<name>`, `history`, `extensions`.',
      ),
    restarted: z
      .array(z.string())
      .describe(
        'Components whose configuration changed, stopped and started again (`license`: the license file now grants something else).',
      ),
    stopped: z.array(z.string()).describe('Components the new profile removed or disabled.'),
    unchanged: z.array(z.string()).describe('Components left running as they were.'),
    requiresRestart: z
      .array(z.string())
      .describe(
        'Sections that changed but take effect only at the next restart of tagd: `server` (listeners), `security` (token lifetimes, write rate limit), `queries` (limits).',
      ),
    failed: z
      .array(z.object({ component: z.string(), message: z.string() }))
      .describe(
        'Components that could not start with their new configuration, and why; the others run.',
      ),
  })
  .meta({ id: 'ReloadSummary' });

/** The profile routes. */
export function profileRoutes(deps: ApiDeps): RouteDefinition[] {
  const access = { kind: 'permission', permission: 'ProfileManage' } as const;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v2/Profile',
      operationId: 'getProfile',
      tag,
      summary: 'The profile in force, secrets masked',
      description: `The whole profile as the daemon runs it (defaults filled in), in the shape of \`config/profile.schema.json\`, every secret (destination URLs, credentials, passphrases) shown as \`${secretMask}\`. Changes made over the API since start are in it.`,
      access,
      responses: {
        200: {
          description: 'The profile.',
          schema: z.record(z.string(), z.unknown()).meta({
            id: 'Profile',
            description: 'A tagd profile (see config/profile.schema.json).',
          }),
        },
      },
      problems: [],
      handle: () => {
        if (!deps.profile) throw new Error('The profile route needs the profile service.');
        return maskSecrets(profileSchema, deps.profile.current());
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v2/Profile/Reload',
      operationId: 'reloadProfile',
      tag,
      summary: 'Re-read the profile file and restart what changed',
      description:
        'What `systemctl reload tagd` does: the profile file is read and validated as at start. Changed drivers, collections, webhook and MQTT publishers, the history section and the extensions server restart; the rest keeps running, and the API answers throughout. The license file is read again. Changes to `server`, `security` or `queries` are listed in `requiresRestart`. An invalid profile is refused with 400 `profile-invalid` listing every error with its path; the running configuration stays. A reload asked for while another runs waits for it; 503 `busy` while tagd starts or stops.',
      access,
      responses: { 200: { description: 'What the reload did.', schema: reloadSummarySchema } },
      problems: [400, 503],
      handle: async ({ principal }) => {
        const summary = await reloaderOf(deps).reload('api');
        deps.audit.info(
          { event: 'profile-reloaded', username: principal?.user.username, ...summary },
          'profile reloaded',
        );
        return summary;
      },
    }),
  ];
}

/** The reloader of the deps; its absence is a wiring error (500). */
export function reloaderOf(deps: ApiDeps): ProfileReloader {
  if (!deps.reloader) throw new Error('This route needs the profile reloader.');
  return deps.reloader;
}
