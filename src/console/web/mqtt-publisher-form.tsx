import { useSignal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { AlarmFilterFields, alarmChoiceOf, alarmsOfChoice } from './alarm-filter-fields';
import { saveItem } from './api-client';
import type { MqttAuthentication, MqttConfig, MqttPublisher } from './api-types';
import { AuthenticationFields, type CredentialField } from './authentication-fields';
import { CheckField } from './check-field';
import { CollectionsField, useCollectionsChoice } from './collections-field';
import { errorAt, fieldErrorsOf, formMessage } from './form-errors';
import { PublisherFormActions } from './publisher-form-actions';
import { optionsOf, SelectField } from './select-field';
import { TextField, type TextFieldProps } from './text-field';

type Mode = MqttAuthentication['mode'];
const modes: Mode[] = ['None', 'Username password', 'Client certificate'];
const formats: MqttConfig['format'][] = ['json', 'json-per-tag', 'sparkplugB'];
const loggingModes = ['Snapshot', 'On Change', 'Everything'] as const;

/** The credential fields of each mode, with their labels. */
const credentialFields: Record<Mode, CredentialField<Exclude<keyof MqttAuthentication, 'mode'>>[]> =
  {
    None: [],
    'Username password': [
      { key: 'username', label: 'Username', secret: false },
      { key: 'password', label: 'Password', secret: true },
    ],
    'Client certificate': [
      { key: 'certFile', label: 'Client certificate file', secret: false },
      { key: 'keyFile', label: 'Client key file', secret: false },
      { key: 'keyPassphrase', label: 'Key passphrase (optional)', secret: true },
    ],
  };

/** A number as typed: sent as a number when it is one, else as typed, for the API to name. */
function numberOrText(text: string): number | string {
  const trimmed = text.trim();
  return /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/**
 * Seconds as typed, in milliseconds for the API (whole ms); text that is no number goes as typed,
 * for the API to name.
 */
function secondsToMs(text: string): number | string {
  const value = numberOrText(text);
  return typeof value === 'number' ? Math.round(value * 1000) : value;
}

/** Props of {@link MqttPublisherForm}. */
export interface MqttPublisherFormProps {
  /** The publisher to edit (broker URL and secrets masked as the API returned them). */
  existing?: MqttPublisher;
  onDone(): void;
}

/**
 * Create or edit an MQTT publisher. The server validates; its messages appear at their fields.
 * The broker URL and secrets come back as `********` and are sent back so unless edited, which
 * keeps the stored values.
 */
export function MqttPublisherForm({ existing, onDone }: MqttPublisherFormProps) {
  const text = (value: unknown) => (value === undefined ? '' : String(value));
  const values = useSignal<Record<string, string>>({
    name: existing?.name ?? '',
    brokerUrl: existing?.brokerUrl ?? '',
    format: existing?.format ?? 'json',
    topicPrefix: text(existing?.topicPrefix),
    groupId: text(existing?.groupId),
    edgeNodeId: text(existing?.edgeNodeId),
    qos: String(existing?.qos ?? 1),
    retain: existing?.retain === undefined ? '' : String(existing.retain),
    loggingMode: existing?.loggingMode ?? 'On Change',
    // One unit across the publisher forms: seconds (the API takes milliseconds here).
    updateIntervalMs: String((existing?.updateIntervalMs ?? 1000) / 1000),
    bufferLimitMB: String(existing?.bufferLimitMB ?? 64),
    clientId: text(existing?.clientId),
    caFile: text(existing?.caFile),
    primaryHostId: text(existing?.primaryHostId),
    everythingBufferSize: String(existing?.everythingBufferSize ?? 100000),
  });
  const acceptWrites = useSignal(existing?.acceptWrites === true);
  const alarms = useSignal(alarmChoiceOf(existing?.alarms));
  const mode = useSignal<Mode>(existing?.authentication.mode ?? 'None');
  const credentials = useSignal<Partial<MqttAuthentication>>({ ...existing?.authentication });
  const autoConnect = useSignal(existing?.autoConnect ?? true);
  const collections = useCollectionsChoice(existing?.collections ?? []);
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const busy = useSignal(false);
  const v = values.value;
  const sparkplug = v.format === 'sparkplugB';
  // The API counts this interval in milliseconds; the form (like the webhook form) in seconds.
  const at = (field: string) =>
    field === 'updateIntervalMs' && errorAt(errors.value, field)
      ? 'The update interval must be from 0.01 to 86400 seconds.'
      : errorAt(errors.value, field);
  const bound = (id: string): Pick<TextFieldProps, 'value' | 'onValue'> => ({
    value: v[id] ?? '',
    onValue: (typed) => {
      values.value = { ...values.value, [id]: typed };
    },
  });
  const shownFields = [
    ...Object.keys(v),
    'authentication.mode',
    ...credentialFields[mode.value].map((field) => `authentication.${field.key}`),
    'collections',
    'autoConnect',
    'acceptWrites',
    'alarms',
  ];

  const submit = async (event: Event) => {
    event.preventDefault();
    busy.value = true;
    errors.value = {};
    formError.value = '';
    const authentication: Record<string, string> = { mode: mode.value };
    for (const field of credentialFields[mode.value]) {
      const value = credentials.value[field.key];
      if (value !== undefined && value !== '') authentication[field.key] = value;
      else if (field.key !== 'keyPassphrase') authentication[field.key] = '';
    }
    const { state: _state, ...stored } = existing ?? ({} as Partial<MqttPublisher>);
    const optional = (key: string) => (v[key]?.trim() ? { [key]: v[key]?.trim() } : {});
    // Whatever the form does not show (clientId, caFile, everythingBufferSize) goes back as it came.
    const body: Record<string, unknown> = {
      ...stored,
      name: v.name?.trim(),
      brokerUrl: v.brokerUrl,
      authentication,
      collections: collections.chosen(),
      loggingMode: v.loggingMode,
      updateIntervalMs: secondsToMs(v.updateIntervalMs ?? ''),
      qos: numberOrText(v.qos ?? ''),
      autoConnect: autoConnect.value,
      format: v.format,
      bufferLimitMB: numberOrText(v.bufferLimitMB ?? ''),
      everythingBufferSize: numberOrText(v.everythingBufferSize ?? ''),
    };
    for (const key of [
      'topicPrefix',
      'groupId',
      'edgeNodeId',
      'retain',
      'clientId',
      'caFile',
      'primaryHostId',
      'acceptWrites',
      'alarms',
    ]) {
      delete body[key];
    }
    Object.assign(body, optional('clientId'), optional('caFile'));
    if (sparkplug) {
      Object.assign(body, optional('primaryHostId'), { acceptWrites: acceptWrites.value });
    }
    const alarmFilter = alarmsOfChoice(alarms.value);
    if (alarmFilter) body.alarms = alarmFilter;
    Object.assign(body, v.retain ? { retain: v.retain === 'true' } : {});
    Object.assign(
      body,
      sparkplug ? { ...optional('groupId'), ...optional('edgeNodeId') } : optional('topicPrefix'),
    );
    try {
      await saveItem('/api/v2/Publishers/Mqtt', existing?.name, body);
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = formMessage(error, shownFields);
    } finally {
      busy.value = false;
    }
  };

  const textField = (id: string, label: string, hint?: string, extra?: object) => (
    <TextField
      id={id}
      label={label}
      error={at(id)}
      hint={hint}
      autocomplete="off"
      {...bound(id)}
      {...extra}
    />
  );
  const selectField = (id: string, label: string, options: ComponentChildren) => (
    <SelectField id={id} label={label} error={at(id)} {...bound(id)}>
      {options}
    </SelectField>
  );

  return (
    <form class="panel form" onSubmit={submit} noValidate aria-labelledby="mqtt-form-title">
      <h1 id="mqtt-form-title">
        {existing ? `Edit MQTT publisher ${existing.name}` : 'New MQTT publisher'}
      </h1>
      {textField('name', 'Name', 'Letters, digits and _ . : -', { disabled: Boolean(existing) })}
      {textField(
        'brokerUrl',
        'Broker URL',
        existing
          ? 'Shown masked; leave as is to keep the stored address.'
          : 'mqtt://, mqtts://, ws:// or wss://',
        { placeholder: 'mqtts://broker.plant.local:8883' },
      )}
      <AuthenticationFields
        modes={modes}
        credentialFields={credentialFields}
        mode={mode}
        credentials={credentials}
        errorAt={at}
      />
      {selectField('format', 'Format', optionsOf(formats))}
      {sparkplug ? (
        <>
          {textField('groupId', 'Group id')}
          {textField('edgeNodeId', 'Edge node id')}
          {textField(
            'primaryHostId',
            'Primary host id (optional)',
            'Store and forward: births only while this host is online; data kept and sent later flagged historical.',
          )}
          <CheckField
            id="acceptWrites"
            label="Accept writes (carry out DCMD writes to writable tags, audited)"
            checked={acceptWrites.value}
            onChange={(checked) => {
              acceptWrites.value = checked;
            }}
          />
        </>
      ) : (
        textField('topicPrefix', 'Topic prefix', 'Default: tagd/<host name>.')
      )}
      {selectField('qos', 'QoS', [
        <option key="1" value="1">
          1 (acknowledged by the broker)
        </option>,
        <option key="0" value="0">
          0 (at most once)
        </option>,
      ])}
      {selectField('retain', 'Retain', [
        <option key="" value="">
          Default (json-per-tag: yes; json and sparkplugB: no)
        </option>,
        <option key="true" value="true">
          Yes
        </option>,
        <option key="false" value="false">
          No
        </option>,
      ])}
      <CollectionsField choice={collections} error={at('collections')} />
      {selectField('loggingMode', 'Logging mode', optionsOf(loggingModes))}
      {textField('updateIntervalMs', 'Update interval (seconds)', '0.01 to 86400.', {
        type: 'number',
        inputMode: 'decimal',
        step: 'any',
      })}
      {textField('clientId', 'Client id (optional)', 'Default: tagd-<host name>-<publisher name>.')}
      {textField(
        'caFile',
        'CA file (optional)',
        "PEM file of extra CAs for an mqtts:// or wss:// broker, relative to the profile's folder.",
      )}
      <p class="hint">
        json and json-per-tag carry only tags holding a number (the spec's entries); a boolean or
        string tag is left out. sparkplugB carries numbers (Double), booleans (Boolean) and strings
        (String).
      </p>
      <AlarmFilterFields choice={alarms} errorAt={at} />
      {v.loggingMode === 'Everything'
        ? textField(
            'everythingBufferSize',
            'Everything buffer (updates)',
            'Updates kept between publishes; beyond, the oldest are dropped.',
            { type: 'number', inputMode: 'numeric' },
          )
        : null}
      {textField(
        'bufferLimitMB',
        'Buffer limit (MB)',
        '1 to 4096: kept while the broker is away.',
        {
          type: 'number',
          inputMode: 'numeric',
        },
      )}
      <CheckField
        id="autoConnect"
        label="Auto Connect (start when the profile loads)"
        checked={autoConnect.value}
        onChange={(checked) => {
          autoConnect.value = checked;
        }}
      />
      <PublisherFormActions
        resource="/api/v2/Publishers/Mqtt"
        existing={existing?.name}
        formError={formError.value}
        busy={busy.value}
        onDone={onDone}
        onDeleteError={(error) => {
          formError.value = formMessage(error, []);
        }}
      />
    </form>
  );
}
