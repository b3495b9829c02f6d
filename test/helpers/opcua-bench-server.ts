/**
 * The OPC UA server of bench/opcua.bench.ts, run as a child process so its CPU is not counted
 * with the client's: `node --import tsx test/helpers/opcua-bench-server.ts PKI_DIR COUNT
 * PERIOD_MS`. It serves COUNT Double variables `ns=1;s=Bulk<i>`, gives every one of them a new
 * value every PERIOD_MS, prints `{"endpointUrl": …}` on stdout once listening, and runs until
 * killed.
 */
import { OpcuaTestServer } from './opcua-server.js';

const [pkiDir, countText = '10000', periodText = '1000'] = process.argv.slice(2);
if (pkiDir === undefined)
  throw new Error('usage: opcua-bench-server.ts PKI_DIR [COUNT] [PERIOD_MS]');
const count = Number(countText);
const server = await OpcuaTestServer.start({ pkiDir, bulk: count });
let tick = 0;
setInterval(() => {
  tick++;
  for (let i = 0; i < count; i++) server.set(`Bulk${i}`, i + tick / 1000);
}, Number(periodText));
process.stdout.write(`${JSON.stringify({ endpointUrl: server.endpointUrl })}\n`);
process.on('SIGTERM', () => {
  void server.stop().finally(() => process.exit(0));
});
