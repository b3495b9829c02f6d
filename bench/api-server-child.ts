/**
 * Child process of bench/api-cpu.bench.ts: runs one of the API benchmark servers
 * (bench/api-servers.ts) alone, so its CPU time can be read from /proc. Argument `bare` or
 * `api`; prints one JSON line `{ "url", "token" }` once listening, and stops on SIGTERM.
 */
import { apiServer, bareServer } from './api-servers.js';

const token = { value: '' };
const side = process.argv[2] === 'api' ? apiServer(token) : bareServer();
const url = await side.start();
process.stdout.write(`${JSON.stringify({ url, token: token.value })}\n`);
process.on('SIGTERM', () => {
  void side.stop().finally(() => process.exit(0));
});
