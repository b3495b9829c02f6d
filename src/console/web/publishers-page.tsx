import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, encodePath, failureMessage } from './api-client';
import type { MqttPublisher, PublisherState, Sample, WebhookPublisher } from './api-types';
import { FormError } from './form-error';
import { formatTime } from './format';
import { MqttPublisherForm } from './mqtt-publisher-form';
import { type MqttPublisherRow, MqttPublisherTable } from './mqtt-publisher-table';
import { Notice } from './notice';
import { PublisherForm } from './publisher-form';
import { healthWords } from './publisher-health';
import { PublisherStatusCell, PublisherTable } from './publisher-table';
import { href, navigate, route } from './router';
import { can } from './session';
import { usePoll } from './use-poll';

/** A publisher with its health tags (spec §2.4), when this account may read tags. */
interface PublisherRow {
  publisher: WebhookPublisher;
  success?: Sample;
  error?: Sample;
}

/** The webhook and MQTT publishers, each with its delivery health tags. */
async function loadPublishers(): Promise<{ webhooks: PublisherRow[]; mqtt: MqttPublisherRow[] }> {
  const [webhooks, mqtt] = await Promise.all([
    withHealth(await api<WebhookPublisher[]>('/api/v2/Publishers/Webhooks')),
    withHealth(await api<MqttPublisher[]>('/api/v2/Publishers/Mqtt')),
  ]);
  return { webhooks, mqtt };
}

async function withHealth<P extends { name: string }>(
  publishers: P[],
): Promise<{ publisher: P; success?: Sample; error?: Sample }[]> {
  if (!can('TagView')) return publishers.map((publisher) => ({ publisher }));
  const health = (name: string, tag: string) =>
    api<Sample>(`/api/v2/Tags/Sample/${encodePath(`Publishers/${name}/${tag}`)}`).catch(
      () => undefined,
    );
  return Promise.all(
    publishers.map(async (publisher) => {
      const [success, error] = await Promise.all([
        health(publisher.name, 'LastDeliverySuccess'),
        health(publisher.name, 'LastDeliveryError'),
      ]);
      return {
        publisher,
        ...(success ? { success } : {}),
        ...(error ? { error } : {}),
      };
    }),
  );
}

/**
 * A publisher read afresh for its form: the list's last poll may predate a save made a moment
 * ago, and a form opened on it would send the old values back.
 */
function Fresh<P>({ path, render }: { path: string; render(item: P): ComponentChildren }) {
  const [item, setItem] = useState<P | undefined>(undefined);
  const [error, setError] = useState('');
  useEffect(() => {
    api<P>(path).then(setItem, (failure: unknown) => setError(failureMessage(failure)));
  }, [path]);
  if (error) {
    return <FormError>{error}</FormError>;
  }
  return item === undefined ? <p role="status">Loading…</p> : render(item);
}

/**
 * Publishers: the webhook and MQTT publishers with status On/Off/Error, their health tags and last
 * delivery; Start and Stop; create and edit (`#/publishers/new`, `#/publishers/edit/<name>`; MQTT:
 * `#/publishers/new-mqtt`, `#/publishers/edit-mqtt/<name>`).
 */
export function PublishersPage() {
  const [, action, name] = route.value.segments;
  const list = usePoll(loadPublishers, 1_500);
  const message = useSignal('');
  const manage = can('PublisherManage');

  if (manage && action === 'new') {
    return <PublisherForm onDone={() => navigate('publishers')} />;
  }
  if (manage && action === 'new-mqtt') {
    return <MqttPublisherForm onDone={() => navigate('publishers')} />;
  }
  if (manage && action === 'edit-mqtt' && name) {
    return (
      <Fresh<MqttPublisher>
        key={`mqtt/${name}`}
        path={`/api/v2/Publishers/Mqtt/${encodeURIComponent(name)}`}
        render={(existing) => (
          <MqttPublisherForm existing={existing} onDone={() => navigate('publishers')} />
        )}
      />
    );
  }
  if (manage && action === 'edit' && name) {
    return (
      <Fresh<WebhookPublisher>
        key={`webhook/${name}`}
        path={`/api/v2/Publishers/Webhooks/${encodeURIComponent(name)}`}
        render={(existing) => (
          <PublisherForm existing={existing} onDone={() => navigate('publishers')} />
        )}
      />
    );
  }

  const command = async (
    publisher: string,
    verb: 'Start' | 'Stop',
    kind: 'Webhooks' | 'Mqtt' = 'Webhooks',
  ) => {
    message.value = '';
    try {
      const state = await api<PublisherState>(
        `/api/v2/Publishers/${kind}/${encodeURIComponent(publisher)}/${verb}`,
        { method: 'POST' },
      );
      if (verb === 'Start' && state.status === 'Off' && state.reason) {
        message.value = `${publisher} stayed Off: ${state.reason}`;
      }
    } catch (error) {
      message.value = error instanceof ApiError ? error.message : String(error);
    }
    list.reload();
  };

  return (
    <section class="panel" aria-labelledby="publishers-title">
      <div class="panel-head">
        <h1 id="publishers-title">Publishers</h1>
        {manage ? (
          <div class="actions">
            <a class="button primary" href={href('publishers', 'new')}>
              New webhook publisher
            </a>
            <a class="button primary" href={href('publishers', 'new-mqtt')}>
              New MQTT publisher
            </a>
          </div>
        ) : null}
      </div>
      <FormError>{list.error}</FormError>
      <Notice>{message.value}</Notice>
      <h2 class="section-title">Webhooks</h2>
      {!list.data ? (
        <p role="status">Loading…</p>
      ) : list.data.webhooks.length === 0 ? (
        <p>No webhook publishers yet.</p>
      ) : (
        <PublisherTable caption="Webhook publishers" target="Destination" manage={manage}>
          {list.data.webhooks.map(({ publisher, success, error }) => {
            const { state } = publisher;
            const last = state.lastDelivery;
            return (
              <tr key={publisher.name} data-publisher={publisher.name}>
                <th scope="row">{publisher.name}</th>
                <PublisherStatusCell state={state} />
                <td data-label="Health">
                  <div data-testid="publisher-health">{healthWords(success, error)}</div>
                </td>
                <td data-label="Last delivery">
                  {last
                    ? `${formatTime(last.at)}: ${last.ok ? 'delivered' : 'failed'}${
                        last.httpStatus ? ` (HTTP ${last.httpStatus})` : ''
                      }, ${last.samples} samples, ${last.attempts} attempt${
                        last.attempts === 1 ? '' : 's'
                      }`
                    : 'None yet'}
                </td>
                <td data-label="Destination">
                  <code>{publisher.destinationUrl}</code>
                </td>
                {manage ? (
                  <td>
                    <div class="actions">
                      {state.status === 'Off' ? (
                        <button type="button" onClick={() => void command(publisher.name, 'Start')}>
                          Start<span class="visually-hidden"> {publisher.name}</span>
                        </button>
                      ) : (
                        <button type="button" onClick={() => void command(publisher.name, 'Stop')}>
                          Stop<span class="visually-hidden"> {publisher.name}</span>
                        </button>
                      )}
                      <a class="button" href={href('publishers', 'edit', publisher.name)}>
                        Edit<span class="visually-hidden"> {publisher.name}</span>
                      </a>
                    </div>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </PublisherTable>
      )}
      <h2 class="section-title">MQTT</h2>
      {list.data ? (
        <MqttPublisherTable
          rows={list.data.mqtt}
          manage={manage}
          command={(publisher, verb) => void command(publisher, verb, 'Mqtt')}
        />
      ) : null}
    </section>
  );
}
