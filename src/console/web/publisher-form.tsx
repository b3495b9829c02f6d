import { useSignal } from '@preact/signals';
import { AlarmFilterFields, alarmChoiceOf, alarmsOfChoice } from './alarm-filter-fields';
import { ApiError, api } from './api-client';
import type { WebhookAuthentication, WebhookPublisher } from './api-types';
import { CollectionsField, useCollectionsChoice } from './collections-field';
import { describedBy, Field } from './field';
import { FormError } from './form-error';
import { errorAt as fieldError, fieldErrorsOf, formMessage } from './form-errors';
import { SendTest } from './publisher-test';

type Mode = WebhookAuthentication['mode'];
const modes: Mode[] = ['None', 'Bearer token', 'API key header', 'Basic auth'];
const loggingModes = ['Snapshot', 'On Change', 'Everything'] as const;

/** The credential fields of each mode (spec §2.4), with their labels. */
const credentialFields: Record<
  Mode,
  { key: keyof WebhookAuthentication; label: string; secret: boolean }[]
> = {
  None: [],
  'Bearer token': [{ key: 'bearerToken', label: 'Bearer token', secret: true }],
  'API key header': [
    { key: 'apiKeyHeaderName', label: 'API key header name', secret: false },
    { key: 'apiKeyHeaderValue', label: 'API key header value', secret: true },
  ],
  'Basic auth': [
    { key: 'basicAuthUsername', label: 'Basic auth username', secret: false },
    { key: 'basicAuthPassword', label: 'Basic auth password', secret: true },
  ],
};

/** Props of {@link PublisherForm}. */
export interface PublisherFormProps {
  /** The publisher to edit (secrets masked as the API returned them); absent to create one. */
  existing?: WebhookPublisher;
  onDone(): void;
}

/**
 * Create or edit a webhook publisher with the spec's fields and defaults. The server validates;
 * its messages appear at their fields. Masked secrets (`********`) are sent back untouched
 * unless edited, which keeps the stored values.
 */
export function PublisherForm({ existing, onDone }: PublisherFormProps) {
  const name = useSignal(existing?.name ?? '');
  const destinationUrl = useSignal(existing?.destinationUrl ?? '');
  const mode = useSignal<Mode>(existing?.authentication.mode ?? 'None');
  const credentials = useSignal<Partial<WebhookAuthentication>>({
    ...(existing?.authentication ?? {}),
  });
  const collections = useCollectionsChoice(existing?.collections ?? []);
  const loggingMode = useSignal<string>(existing?.loggingMode ?? 'Snapshot');
  const interval = useSignal(String(existing?.updateIntervalSeconds ?? 10));
  const autoConnect = useSignal(existing?.autoConnect ?? true);
  const caFile = useSignal(typeof existing?.caFile === 'string' ? existing.caFile : '');
  const signingSecret = useSignal(
    typeof existing?.signingSecret === 'string' ? existing.signingSecret : '',
  );
  const gzip = useSignal(existing?.gzip === true);
  const storeAndForward = useSignal(existing?.storeAndForward === true);
  const bufferLimit = useSignal(
    existing?.bufferLimitMB === undefined ? '' : String(existing.bufferLimitMB),
  );
  const alarms = useSignal(alarmChoiceOf(existing?.alarms));
  const everythingBuffer = useSignal(String(existing?.everythingBufferSize ?? 100000));
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const busy = useSignal(false);
  const confirmingDelete = useSignal(false);
  const errorAt = (field: string) => fieldError(errors.value, field);

  const submit = async (event: Event) => {
    event.preventDefault();
    busy.value = true;
    errors.value = {};
    formError.value = '';
    const authentication: Record<string, string> = { mode: mode.value };
    for (const field of credentialFields[mode.value]) {
      authentication[field.key] = String(credentials.value[field.key] ?? '');
    }
    const chosen = collections.chosen();
    const intervalText = interval.value.trim();
    const { state: _state, ...stored } = existing ?? ({} as Partial<WebhookPublisher>);
    // Whatever the form does not show (caFile, signing secret, gzip…) goes back as it came.
    const body: Record<string, unknown> = {
      ...stored,
      name: name.value.trim(),
      destinationUrl: destinationUrl.value,
      authentication,
      collections: chosen,
      loggingMode: loggingMode.value,
      updateIntervalSeconds: /^-?\d+(\.\d+)?$/.test(intervalText)
        ? Number(intervalText)
        : intervalText,
      autoConnect: autoConnect.value,
      gzip: gzip.value,
      storeAndForward: storeAndForward.value,
    };
    // Optional fields: left out when empty (the defaults apply), sent as typed otherwise.
    for (const key of ['caFile', 'signingSecret', 'bufferLimitMB', 'alarms']) delete body[key];
    if (caFile.value.trim()) body.caFile = caFile.value.trim();
    if (signingSecret.value.trim()) body.signingSecret = signingSecret.value.trim();
    const limit = bufferLimit.value.trim();
    if (storeAndForward.value && limit) {
      body.bufferLimitMB = /^\d+$/.test(limit) ? Number(limit) : limit;
    }
    const bufferText = everythingBuffer.value.trim();
    body.everythingBufferSize = /^\d+$/.test(bufferText) ? Number(bufferText) : bufferText;
    const alarmFilter = alarmsOfChoice(alarms.value);
    if (alarmFilter) body.alarms = alarmFilter;
    try {
      if (existing) {
        await api(`/api/v2/Publishers/Webhooks/${encodeURIComponent(existing.name)}`, {
          method: 'PUT',
          body,
        });
      } else {
        await api('/api/v2/Publishers/Webhooks', { method: 'POST', body });
      }
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = formMessage(error, fieldIds(mode.value));
    } finally {
      busy.value = false;
    }
  };

  const remove = async (publisher: string) => {
    try {
      await api(`/api/v2/Publishers/Webhooks/${encodeURIComponent(publisher)}`, {
        method: 'DELETE',
      });
      onDone();
    } catch (error) {
      formError.value = error instanceof ApiError ? error.message : String(error);
    }
  };

  const check = (id: string, label: string, value: { value: boolean }) => (
    <div class={`field check-field${errorAt(id) ? ' invalid' : ''}`}>
      <label class="check">
        <input
          id={id}
          type="checkbox"
          checked={value.value}
          onChange={(event) => {
            value.value = (event.target as HTMLInputElement).checked;
          }}
        />{' '}
        {label}
      </label>
      {errorAt(id) ? (
        <p id={`${id}-error`} class="field-error" role="alert">
          {errorAt(id)}
        </p>
      ) : null}
    </div>
  );
  const control = (id: string, hint?: string) => ({
    id,
    'aria-invalid': errorAt(id) ? true : undefined,
    'aria-describedby': describedBy(id, errorAt(id), hint),
  });

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="publisher-form-title">
      <h1 id="publisher-form-title">
        {existing ? `Edit publisher ${existing.name}` : 'New webhook publisher'}
      </h1>
      <Field id="name" label="Name" error={errorAt('name')} hint="Letters, digits and _ . : -">
        <input
          {...control('name', 'hint')}
          value={name.value}
          disabled={Boolean(existing)}
          onInput={(event) => {
            name.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <Field
        id="destinationUrl"
        label="Destination URL"
        error={errorAt('destinationUrl')}
        hint={existing ? 'Shown masked; leave as is to keep the stored address.' : undefined}
      >
        <input
          {...control('destinationUrl', existing ? 'hint' : undefined)}
          type="url"
          value={destinationUrl.value}
          placeholder="https://receiver.example/hook"
          autocomplete="off"
          onInput={(event) => {
            destinationUrl.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <Field id="authentication.mode" label="Authentication" error={errorAt('authentication.mode')}>
        <select
          {...control('authentication.mode')}
          value={mode.value}
          onChange={(event) => {
            mode.value = (event.target as HTMLSelectElement).value as Mode;
          }}
        >
          {modes.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      </Field>
      {credentialFields[mode.value].map((field) => {
        const id = `authentication.${field.key}`;
        return (
          <Field key={id} id={id} label={field.label} error={errorAt(id)}>
            <input
              {...control(id)}
              type={field.secret ? 'password' : 'text'}
              autocomplete="off"
              value={String(credentials.value[field.key] ?? '')}
              onInput={(event) => {
                credentials.value = {
                  ...credentials.value,
                  [field.key]: (event.target as HTMLInputElement).value,
                };
              }}
            />
          </Field>
        );
      })}
      <CollectionsField choice={collections} error={errorAt('collections')} />
      <Field id="loggingMode" label="Logging mode" error={errorAt('loggingMode')}>
        <select
          {...control('loggingMode')}
          value={loggingMode.value}
          onChange={(event) => {
            loggingMode.value = (event.target as HTMLSelectElement).value;
          }}
        >
          {loggingModes.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      </Field>
      {loggingMode.value === 'Everything' ? (
        <Field
          id="everythingBufferSize"
          label="Everything buffer (updates)"
          error={errorAt('everythingBufferSize')}
          hint="Updates kept between publishes, 1 to 10000000; beyond, the oldest are dropped."
        >
          <input
            {...control('everythingBufferSize', 'hint')}
            type="number"
            inputMode="numeric"
            value={everythingBuffer.value}
            onInput={(event) => {
              everythingBuffer.value = (event.target as HTMLInputElement).value;
            }}
          />
        </Field>
      ) : null}
      <Field
        id="updateIntervalSeconds"
        label="Update interval (seconds)"
        error={errorAt('updateIntervalSeconds')}
        hint="Whole seconds, 1 to 86400."
      >
        <input
          {...control('updateIntervalSeconds', 'hint')}
          type="number"
          inputMode="numeric"
          min={1}
          max={86400}
          step={1}
          value={interval.value}
          onInput={(event) => {
            interval.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <div class={`field check-field${errorAt('autoConnect') ? ' invalid' : ''}`}>
        <label class="check">
          <input
            id="autoConnect"
            type="checkbox"
            checked={autoConnect.value}
            onChange={(event) => {
              autoConnect.value = (event.target as HTMLInputElement).checked;
            }}
          />{' '}
          Auto Connect (start when the profile loads)
        </label>
      </div>
      <p class="hint">
        Only tags holding a number go into a batch (the JSON array of the spec); a tag holding a
        boolean or a string is left out, and a tag without a good value is sent with its quality
        only. Booleans and strings are carried by the MQTT publisher's sparkplugB format only.
      </p>
      <Field
        id="signingSecret"
        label="Signing secret (optional)"
        error={errorAt('signingSecret')}
        hint="Standard Webhooks: whsec_ followed by base64. Shown masked; leave as is to keep it."
      >
        <input
          {...control('signingSecret', 'hint')}
          type="password"
          autocomplete="off"
          value={signingSecret.value}
          onInput={(event) => {
            signingSecret.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      <Field
        id="caFile"
        label="CA file (optional)"
        error={errorAt('caFile')}
        hint="PEM file of extra CAs for an https destination, relative to the profile's folder."
      >
        <input
          {...control('caFile', 'hint')}
          autocomplete="off"
          value={caFile.value}
          onInput={(event) => {
            caFile.value = (event.target as HTMLInputElement).value;
          }}
        />
      </Field>
      {check('gzip', 'Gzip request bodies', gzip)}
      {check(
        'storeAndForward',
        'Store and forward (keep failed batches on disk, send them in order once the receiver answers)',
        storeAndForward,
      )}
      {storeAndForward.value ? (
        <Field
          id="bufferLimitMB"
          label="Outbox limit (MB)"
          error={errorAt('bufferLimitMB')}
          hint="1 to 4096; empty: 64. Beyond, the oldest batches are dropped."
        >
          <input
            {...control('bufferLimitMB', 'hint')}
            type="number"
            inputMode="numeric"
            min={1}
            max={4096}
            value={bufferLimit.value}
            onInput={(event) => {
              bufferLimit.value = (event.target as HTMLInputElement).value;
            }}
          />
        </Field>
      ) : null}
      <AlarmFilterFields choice={alarms} errorAt={errorAt} />
      {existing ? (
        <SendTest
          path={`/api/v2/Publishers/Webhooks/${encodeURIComponent(existing.name)}/Test`}
          name={existing.name}
        />
      ) : null}
      <FormError>{formError.value}</FormError>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy.value}>
          {existing ? 'Save' : 'Create'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        {existing ? (
          confirmingDelete.value ? (
            <button type="button" class="danger" onClick={() => void remove(existing.name)}>
              Confirm: delete {existing.name}
            </button>
          ) : (
            <button
              type="button"
              onClick={() => {
                confirmingDelete.value = true;
              }}
            >
              Delete publisher
            </button>
          )
        ) : null}
      </div>
    </form>
  );
}

function fieldIds(mode: Mode): string[] {
  return [
    'name',
    'destinationUrl',
    'authentication.mode',
    ...credentialFields[mode].map((field) => `authentication.${field.key}`),
    'collections',
    'loggingMode',
    'updateIntervalSeconds',
    'autoConnect',
    'signingSecret',
    'caFile',
    'gzip',
    'storeAndForward',
    'bufferLimitMB',
    'alarms',
    'everythingBufferSize',
  ];
}
