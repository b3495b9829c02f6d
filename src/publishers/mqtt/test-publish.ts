/**
 * "Send test" of an MQTT publisher (json and json-per-tag formats): one batch of the current
 * values of its collections' members, published once at QoS 1 to `<topicPrefix>/test` over a
 * connection of its own (the publisher's broker, credentials and CA; client id
 * `<clientId>-test`, so the running publisher's session is not taken over), and the broker's
 * PUBACK reported. The running publisher (counters, health tags, outbox) is left alone.
 */
import { connect, type MqttClient } from 'mqtt';
import type { Clock } from '../../clock.js';
import type { Collections } from '../../tags/collections.js';
import type { TagStore } from '../../tags/tag-store.js';
import type { PublisherTestResult } from '../publisher.js';
import { buildPayload } from '../trigger/payload.js';
import { testSamples } from '../webhook/test-delivery.js';
import { brokerClientOptions } from './broker-connection.js';
import { describeBrokerError } from './broker-errors.js';
import { readBrokerAuth } from './broker-files.js';
import { clientIdOf, type MqttConfig, topicPrefixOf } from './schema.js';

/** What a test publish reads and how it connects. */
export interface TestPublishDeps {
  store: TagStore;
  collections: Collections;
  clock: Clock;
  /** Folder relative files (caFile, client certificate) are resolved against. */
  baseDir: string;
}

/** Why a sparkplugB publisher has no test message: its messages belong to its session. */
export const sparkplugTestRefusal =
  "Send test covers the json formats: a Sparkplug message belongs to the publisher's session (births first), which a test cannot join. Start the publisher and watch its state instead.";

/**
 * Publishes one test batch (the JSON array of the json format) and waits for the PUBACK.
 * @throws Error when a file the configuration names cannot be used (the message names the field).
 */
export async function publishMqttTest(
  config: MqttConfig,
  deps: TestPublishDeps,
): Promise<PublisherTestResult> {
  const at = () => new Date(deps.clock.now()).toISOString();
  if (config.format === 'sparkplugB') {
    return {
      ok: false,
      attempts: 0,
      durationMs: 0,
      samples: 0,
      at: at(),
      error: sparkplugTestRefusal,
    };
  }
  const auth = await readBrokerAuth(config, deps.baseDir);
  const entries = buildPayload(testSamples(deps, config.collections));
  const url = new URL(config.brokerUrl);
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  let client: MqttClient | undefined;
  try {
    client = connect(config.brokerUrl, brokerClientOptions(`${clientIdOf(config)}-test`, auth));
    const connected = client;
    await new Promise<void>((resolve, reject) => {
      connected.once('connect', () => resolve());
      connected.once('error', reject);
      connected.once('close', () => reject(new Error('the broker closed the connection')));
    });
    await connected.publishAsync(`${topicPrefixOf(config)}/test`, JSON.stringify(entries), {
      qos: 1,
      retain: false,
    });
    // mqtt.js resolves only on PUBACK reason 0 (success) or 16 (no matching subscribers).
    return {
      ok: true,
      pubackReasonCode: 0,
      attempts: 1,
      durationMs: elapsed(),
      samples: entries.length,
      at: at(),
    };
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return {
      ok: false,
      ...(typeof code === 'number' ? { pubackReasonCode: code } : {}),
      attempts: 1,
      durationMs: elapsed(),
      samples: entries.length,
      at: at(),
      // Named without the URL or a credential (describeBrokerError's rule).
      error: describeBrokerError(error, url),
    };
  } finally {
    client?.end(true);
  }
}
