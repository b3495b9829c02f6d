import { useSignal } from '@preact/signals';
import { AlarmFilterFields, alarmChoiceOf, alarmsOfChoice } from './alarm-filter-fields';
import { ApiError, saveItem } from './api-client';
import type { WebhookAuthentication, WebhookPublisher } from './api-types';
import { AuthenticationFields, type CredentialField } from './authentication-fields';
import { CheckField } from './check-field';
import { CollectionsField, useCollectionsChoice } from './collections-field';
import { errorAt as fieldError, fieldErrorsOf, formMessage } from './form-errors';
import { PublisherFormActions } from './publisher-form-actions';
import { optionsOf, SelectField } from './select-field';
import { boundTo, TextField } from './text-field';

type Mode = WebhookAuthentication['mode'];
const modes: Mode[] = ['None', 'Bearer token', 'API key header', 'Basic auth'];
const loggingModes = ['Snapshot', 'On Change', 'Everything'] as const;

/** The credential fields of each mode (spec §2.4), with their labels. */
const credentialFields: Record<Mode, CredentialField<keyof WebhookAuthentication>[]> = {
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
      await saveItem('/api/v2/Publishers/Webhooks', existing?.name, body);
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = formMessage(error, fieldIds(mode.value));
    } finally {
      busy.value = false;
    }
  };

  const check = (id: string, label: string, value: { value: boolean }) => (
    <CheckField
      id={id}
      label={label}
      checked={value.value}
      onChange={(checked) => {
        value.value = checked;
      }}
      error={errorAt(id)}
    />
  );

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="publisher-form-title">
      <h1 id="publisher-form-title">
        {existing ? `Edit publisher ${existing.name}` : 'New webhook publisher'}
      </h1>
      <TextField
        id="name"
        label="Name"
        error={errorAt('name')}
        hint="Letters, digits and _ . : -"
        disabled={Boolean(existing)}
        {...boundTo(name)}
      />
      <TextField
        id="destinationUrl"
        label="Destination URL"
        error={errorAt('destinationUrl')}
        hint={existing ? 'Shown masked; leave as is to keep the stored address.' : undefined}
        type="url"
        placeholder="https://receiver.example/hook"
        autocomplete="off"
        {...boundTo(destinationUrl)}
      />
      <AuthenticationFields
        modes={modes}
        credentialFields={credentialFields}
        mode={mode}
        credentials={credentials}
        errorAt={errorAt}
      />
      <CollectionsField choice={collections} error={errorAt('collections')} />
      <SelectField
        id="loggingMode"
        label="Logging mode"
        error={errorAt('loggingMode')}
        {...boundTo(loggingMode)}
      >
        {optionsOf(loggingModes)}
      </SelectField>
      {loggingMode.value === 'Everything' ? (
        <TextField
          id="everythingBufferSize"
          label="Everything buffer (updates)"
          error={errorAt('everythingBufferSize')}
          hint="Updates kept between publishes, 1 to 10000000; beyond, the oldest are dropped."
          type="number"
          inputMode="numeric"
          {...boundTo(everythingBuffer)}
        />
      ) : null}
      <TextField
        id="updateIntervalSeconds"
        label="Update interval (seconds)"
        error={errorAt('updateIntervalSeconds')}
        hint="Whole seconds, 1 to 86400."
        type="number"
        inputMode="numeric"
        min={1}
        max={86400}
        step={1}
        {...boundTo(interval)}
      />
      {check('autoConnect', 'Auto Connect (start when the profile loads)', autoConnect)}
      <p class="hint">
        Only tags holding a number go into a batch (the JSON array of the spec); a tag holding a
        boolean or a string is left out, and a tag without a good value is sent with its quality
        only. Booleans and strings are carried by the MQTT publisher's sparkplugB format only.
      </p>
      <TextField
        id="signingSecret"
        label="Signing secret (optional)"
        error={errorAt('signingSecret')}
        hint="Standard Webhooks: whsec_ followed by base64. Shown masked; leave as is to keep it."
        type="password"
        autocomplete="off"
        {...boundTo(signingSecret)}
      />
      <TextField
        id="caFile"
        label="CA file (optional)"
        error={errorAt('caFile')}
        hint="PEM file of extra CAs for an https destination, relative to the profile's folder."
        autocomplete="off"
        {...boundTo(caFile)}
      />
      {check('gzip', 'Gzip request bodies', gzip)}
      {check(
        'storeAndForward',
        'Store and forward (keep failed batches on disk, send them in order once the receiver answers)',
        storeAndForward,
      )}
      {storeAndForward.value ? (
        <TextField
          id="bufferLimitMB"
          label="Outbox limit (MB)"
          error={errorAt('bufferLimitMB')}
          hint="1 to 4096; empty: 64. Beyond, the oldest batches are dropped."
          type="number"
          inputMode="numeric"
          min={1}
          max={4096}
          {...boundTo(bufferLimit)}
        />
      ) : null}
      <AlarmFilterFields choice={alarms} errorAt={errorAt} />
      <PublisherFormActions
        resource="/api/v2/Publishers/Webhooks"
        existing={existing?.name}
        formError={formError.value}
        busy={busy.value}
        onDone={onDone}
        onDeleteError={(error) => {
          formError.value = error instanceof ApiError ? error.message : String(error);
        }}
      />
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
