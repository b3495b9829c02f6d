import type { ExecutionContext } from 'ava';
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';

/** One message a test subscriber received. */
export interface ReceivedMessage {
  topic: string;
  payload: Buffer;
  retain: boolean;
  qos: number;
}

/** A subscriber on the test broker that keeps every message it gets. */
export interface TestSubscriber {
  client: MqttClient;
  messages: ReceivedMessage[];
  /**
   * Resolves with the messages once `predicate` holds for the list (checked at each arrival);
   * `timeoutMs` is only a safety net for a test that would otherwise hang.
   */
  waitFor(
    predicate: (messages: ReceivedMessage[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedMessage[]>;
  /** Resolves once `count` messages arrived in all. */
  waitForCount(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
}

/**
 * Connects an `mqtt` client to `url` and subscribes to `topics` (QoS 1), ended when the test
 * ends.
 */
export async function subscribe(
  t: ExecutionContext,
  url: string,
  topics: string | string[],
  options: IClientOptions = {},
): Promise<TestSubscriber> {
  const client = await connectAsync(url, { reconnectPeriod: 0, ...options });
  t.teardown(() => client.endAsync(true));
  const messages: ReceivedMessage[] = [];
  const waiters = new Set<() => void>();
  client.on('message', (topic, payload, packet) => {
    messages.push({ topic, payload, retain: packet.retain, qos: packet.qos });
    for (const waiter of [...waiters]) waiter();
  });
  await client.subscribeAsync(topics, { qos: 1 });
  const waitFor = (predicate: (list: ReceivedMessage[]) => boolean, timeoutMs = 20_000) =>
    new Promise<ReceivedMessage[]>((resolve, reject) => {
      const check = () => {
        if (!predicate(messages)) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(messages);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`condition not met; ${messages.length} messages: ${describe(messages)}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  return {
    client,
    messages,
    waitFor,
    waitForCount: (count, timeoutMs) => waitFor((list) => list.length >= count, timeoutMs),
  };
}

function describe(messages: ReceivedMessage[]): string {
  return messages
    .slice(-5)
    .map((message) => `${message.topic} ${message.payload.toString().slice(0, 120)}`)
    .join(' | ');
}
