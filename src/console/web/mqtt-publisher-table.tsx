import type { MqttPublisher, Sample } from './api-types';
import { formatTime } from './format';
import { healthWords } from './publisher-health';
import { PublisherStatusCell, PublisherTable } from './publisher-table';
import { href } from './router';
import { sparkplugFormats, storeAndForwardWords } from './sparkplug-words';

/** An MQTT publisher with its delivery health tags (when this account may read tags). */
export interface MqttPublisherRow {
  publisher: MqttPublisher;
  success?: Sample;
  error?: Sample;
}

/** The browser's language, made once. */
const formats = sparkplugFormats();

/** Props of {@link MqttPublisherTable}. */
export interface MqttPublisherTableProps {
  rows: MqttPublisherRow[];
  manage: boolean;
  command(name: string, verb: 'Start' | 'Stop'): void;
}

/**
 * The MQTT publishers: status and reason, connection, queue and delivery health (with a Sparkplug
 * primary host: its state, what is stored and the catch-up), actions.
 */
export function MqttPublisherTable({ rows, manage, command }: MqttPublisherTableProps) {
  if (rows.length === 0) return <p>No MQTT publishers yet.</p>;
  return (
    <PublisherTable caption="MQTT publishers" target="Broker" manage={manage}>
      {rows.map(({ publisher, success, error }) => {
        const { state } = publisher;
        const last = state.lastDelivery;
        const storeAndForward = storeAndForwardWords(publisher, Date.now(), formats);
        return (
          <tr key={publisher.name} data-mqtt-publisher={publisher.name}>
            <th scope="row">{publisher.name}</th>
            <PublisherStatusCell state={state} />
            <td data-label="Health">
              <div data-testid="publisher-health">{healthWords(success, error)}</div>
              <div>Waiting for the broker: {state.queueDepth} messages</div>
              <div>Oldest waiting: {state.oldestQueuedAgeSeconds} s</div>
              {storeAndForward.length > 0 ? (
                <div data-testid="store-and-forward">
                  {storeAndForward.map((line) => (
                    <div key={line}>{line}</div>
                  ))}
                </div>
              ) : null}
            </td>
            <td data-label="Last delivery">
              {last
                ? `${formatTime(last.at)}: ${last.ok ? 'delivered' : 'failed'}, ${last.samples} samples`
                : 'None yet'}
              <div class="muted">
                {state.messages === 1 ? '1 message' : `${state.messages} messages`}
              </div>
            </td>
            <td data-label="Broker">
              <code>{publisher.brokerUrl}</code>
              <div class="muted">
                {publisher.format}, QoS {publisher.qos}
                {state.connected ? ', connected' : ''}
              </div>
            </td>
            {manage ? (
              <td>
                <div class="actions">
                  <button
                    type="button"
                    onClick={() =>
                      command(publisher.name, state.status === 'Off' ? 'Start' : 'Stop')
                    }
                  >
                    {state.status === 'Off' ? 'Start' : 'Stop'}
                    <span class="visually-hidden"> MQTT publisher {publisher.name}</span>
                  </button>
                  <a class="button" href={href('publishers', 'edit-mqtt', publisher.name)}>
                    Edit<span class="visually-hidden"> MQTT publisher {publisher.name}</span>
                  </a>
                </div>
              </td>
            ) : null}
          </tr>
        );
      })}
    </PublisherTable>
  );
}
