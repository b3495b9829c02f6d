/**
 * Child process of the server-CPU benchmarks (bench/server-cpu.ts): runs one of the API
 * benchmark servers (bench/api-servers.ts) alone, so its CPU time can be read from /proc.
 * Argument `bare`, `api` (the REST route answers Tags/Sample), `api-tool` (the assistant's
 * readSamples tool answers it, one session calling), `api-tool-line-each` (a session each call,
 * an audit line each) or `api-tool-unaudited` (no audit line written); prints one JSON line
 * `{ "url", "token" }` once listening, and
 * stops on SIGTERM.
 */

import { apiServer, bareServer } from './api-servers.js';
import type { LoadSide } from './load-harness.js';

/** The servers this child runs, by its argument. */
export type ApiServerKind =
  | 'bare'
  | 'api'
  | 'api-tool'
  | 'api-tool-line-each'
  | 'api-tool-unaudited';

const token = { value: '' };
const sides: Record<ApiServerKind, () => LoadSide> = {
  bare: bareServer,
  api: () => apiServer(token),
  'api-tool': () => apiServer(token, 'tool'),
  'api-tool-line-each': () => apiServer(token, 'tool-line-each'),
  'api-tool-unaudited': () => apiServer(token, 'tool-unaudited'),
};
const kind = process.argv[2] as ApiServerKind;
const side = sides[kind]?.();
if (side === undefined) {
  throw new Error(
    `unknown server '${kind}': bare, api, api-tool, api-tool-line-each or api-tool-unaudited`,
  );
}
const url = await side.start();
process.stdout.write(`${JSON.stringify({ url, token: token.value })}\n`);
process.on('SIGTERM', () => {
  void side.stop().finally(() => process.exit(0));
});
