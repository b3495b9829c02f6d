/**
 * Child process of bench/relay.bench.ts: a bare Sparkplug B edge node (mqtt.js and Tahu's
 * encoder) in a process of its own, so its CPU is not counted with the central side's.
 * Arguments: broker URL, metrics per device, DDATA messages per burst. On start it publishes
 * NBIRTH and one DBIRTH announcing every metric with an alias, then prints `born`; each line
 * `go` on stdin publishes one burst of DDATA (every metric changed, by alias, QoS 1) and prints
 * `sent` once the broker acknowledged them. The payloads are encoded before the burst.
 */
import { createInterface } from 'node:readline';
import { connectAsync } from 'mqtt';
import sparkplug from 'sparkplug-payload';

const codec = sparkplug.get('spBv1.0') as NonNullable<ReturnType<typeof sparkplug.get>>;
const [url = '', metricsArg = '1000', messagesArg = '100'] = process.argv.slice(2);
const metrics = Number(metricsArg);
const messages = Number(messagesArg);
const group = 'Bench';
const node = 'edge';
const device = 'Line1';

const client = await connectAsync(url, {
  reconnectPeriod: 0,
  clientId: `bench-edge-${process.pid}`,
});
let seq = 0;
let value = 0;
const next = () => {
  const current = seq;
  seq = (seq + 1) % 256;
  return current;
};
const encode = (payload: Parameters<typeof codec.encodePayload>[0]) =>
  Buffer.from(codec.encodePayload(payload));

await client.publishAsync(
  `spBv1.0/${group}/NBIRTH/${node}`,
  encode({
    timestamp: Date.now(),
    seq: next(),
    metrics: [
      { name: 'bdSeq', type: 'Int64', value: 0 },
      { name: 'Node Control/Rebirth', type: 'Boolean', value: false },
    ],
  }),
  { qos: 1 },
);
await client.publishAsync(
  `spBv1.0/${group}/DBIRTH/${node}/${device}`,
  encode({
    timestamp: Date.now(),
    seq: next(),
    metrics: Array.from({ length: metrics }, (_, i) => ({
      name: `Zone${i % 10}/Value${i}`,
      alias: i + 1,
      type: 'Double' as const,
      value: 0,
    })),
  }),
  { qos: 1 },
);
process.stdout.write('born\n');

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() !== 'go') continue;
  const payloads: Buffer[] = [];
  for (let m = 0; m < messages; m++) {
    value++;
    const timestamp = Date.now();
    payloads.push(
      encode({
        timestamp,
        seq: next(),
        metrics: Array.from({ length: metrics }, (_, i) => ({
          alias: i + 1,
          timestamp,
          type: 'Double' as const,
          value: value + i / 1000,
        })),
      }),
    );
  }
  await Promise.all(
    payloads.map((payload) =>
      client.publishAsync(`spBv1.0/${group}/DDATA/${node}/${device}`, payload, { qos: 1 }),
    ),
  );
  process.stdout.write('sent\n');
}
await client.endAsync();
