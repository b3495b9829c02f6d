/**
 * `npm run openapi:snapshot`: rewrites test/api/openapi.snapshot.json from the route
 * definitions. test/api/openapi.test.ts fails while the served document differs from it, so
 * every change to a route or model shows up as a reviewed diff of that file.
 */
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import type { AccountService } from '../auth/account-service.js';
import { TagStore } from '../tags/tag-store.js';
import { type ApiDeps, apiRoutes } from './app.js';
import { buildOpenApiDocument, openApiSnapshotText, snapshotVersion } from './openapi.js';

// Route factories only describe routes; their handlers, never run here, are what use the
// services. An account service that throws on use says so should a factory start to need one.
const accounts = new Proxy({} as AccountService, {
  get(_target, property) {
    throw new Error(
      `apiRoutes() used accounts.${String(property)} while building routes; only handlers may.`,
    );
  },
});
const logger = pino({ level: 'silent' });
const deps: ApiDeps = {
  store: new TagStore(),
  logger,
  version: snapshotVersion,
  accounts,
  audit: logger,
};

const target = new URL('../../test/api/openapi.snapshot.json', import.meta.url);
writeFileSync(target, openApiSnapshotText(buildOpenApiDocument(apiRoutes(deps), snapshotVersion)));
process.stdout.write(`wrote ${target.pathname}\n`);
