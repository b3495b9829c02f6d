/**
 * Sparkplug store-and-forward catch-up (issue 23, budget "≥ 50,000 stored samples per second
 * forwarded"), against a Mosquitto started for the run on a loopback port.
 *
 * `sparkplug: catch-up forwarded` — a real MqttPublisher (sparkplugB, `primaryHostId`,
 * Everything, ManualClock) stores 100,000 samples of 1,000 tags while the scripted primary host
 * is offline (100 ticks of 1,000 changes, in its durable outbox on disk). The timed part runs
 * from the host's STATE `online` to the moment the outbox is empty: births, then every stored
 * sample read back from SQLite, encoded as historical DDATA (2,000 metrics a payload), published
 * at QoS 1 and acknowledged by the broker, then removed from the outbox. The rate is stored
 * samples / second. The baseline is a bare mqtt.js client encoding the same samples with
 * `sparkplug-payload` into 2,000-metric payloads and publishing them at QoS 1 (every PUBACK
 * awaited): the floor of encoding and broker alone. A subscriber counts the DDATA messages, so
 * the broker delivers them as in production. Three samples per side, alternating.
 */
import { connectAsync } from 'mqtt';
import { mqttHealthTagIds } from '../src/publishers/mqtt/mqtt-publisher.js';
import { encode } from '../src/publishers/mqtt/sparkplug-payloads.js';
import { brokerCase } from './broker-case.js';
import { alternateRuns, caseResult, type MeasuredCase, sideResult } from './harness.js';
import { backlogSamples, historicalPayload, withBacklog } from './sparkplug-backlog.js';

const tagCount = 1_000;
const rounds = 100;
const stored = tagCount * rounds;
const perPayload = 2_000;
const runs = 3;
const tagIds = Array.from(
  { length: tagCount },
  (_, i) => `Line${i % 4}/plc-${i % 10}/HR${40001 + i}`,
);

function catchUpCase(): MeasuredCase {
  const info = {
    name: 'sparkplug: catch-up forwarded',
    unit: 'samples',
    budget: {
      minRatePerSecond: 50_000,
      description: '≥ 50,000 stored samples/s forwarded after the primary host is back (issue 23)',
    },
  };
  return brokerCase(info, 'spb', async ({ t, broker }) => {
    const sink = await connectAsync(broker.url, { reconnectPeriod: 0 });
    t.teardown(() => sink.endAsync(true));
    await sink.subscribeAsync('spBv1.0/#', { qos: 0 });
    const host = await connectAsync(broker.url, { reconnectPeriod: 0 });
    t.teardown(() => host.endAsync(true));
    let hostTimestamp = Date.now();
    const hostState = (online: boolean) =>
      host.publishAsync(
        'spBv1.0/STATE/central',
        JSON.stringify({ online, timestamp: hostTimestamp++ }),
        { qos: 1, retain: true },
      );

    const baselineRun = async (): Promise<number> => {
      const client = await connectAsync(broker.url, { reconnectPeriod: 0, protocolVersion: 5 });
      const samples = backlogSamples(tagIds, rounds);
      const started = performance.now();
      const publishes: Promise<unknown>[] = [];
      let seq = 0;
      for (let start = 0; start < samples.length; start += perPayload) {
        const payload = encode(
          historicalPayload(samples, start, perPayload, tagCount, 0, seq++ % 256),
        );
        publishes.push(client.publishAsync('spBv1.0/Bench/DDATA/bare/Line0', payload, { qos: 1 }));
      }
      await Promise.all(publishes);
      const seconds = (performance.now() - started) / 1000;
      await client.endAsync();
      return stored / seconds;
    };

    const subjectRun = async (): Promise<number> => {
      await hostState(false);
      return withBacklog(broker.url, tagIds, rounds, async ({ store, publisher }) => {
        const storedId = mqttHealthTagIds('bench').storedSamples;
        const empty = new Promise<void>((resolve) => {
          const off = store.subscribe((updates) => {
            if (updates.some((u) => u.sample.fullTagId === storedId && u.sample.value === 0)) {
              off();
              resolve();
            }
          });
        });
        const started = performance.now();
        await hostState(true);
        await empty;
        const seconds = (performance.now() - started) / 1000;
        const forwarded = publisher.state().sparkplug?.forwardedSamples;
        if (forwarded !== stored) throw new Error(`${forwarded} forwarded, not ${stored}`);
        return stored / seconds;
      });
    };

    const [baseline, subject] = await alternateRuns(runs, baselineRun, subjectRun);
    return caseResult(
      info,
      sideResult(
        `bare mqtt client, ${perPayload}-metric historical DDATA, QoS 1`,
        stored,
        baseline,
      ),
      sideResult(`MqttPublisher catch-up of ${stored} stored samples`, stored, subject),
    );
  });
}

/** The case, for bench/run.ts. */
export const cases: MeasuredCase[] = [catchUpCase()];
