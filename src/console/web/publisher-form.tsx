import { useSignal } from '@preact/signals';
import { ApiError, api } from './api-client';
import type { Collection, WebhookAuthentication, WebhookPublisher } from './api-types';
import { describedBy, Field } from './field';
import { can } from './session';
import { usePoll } from './use-poll';

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
  const collections = useSignal<string[]>(existing?.collections ?? []);
  const loggingMode = useSignal<string>(existing?.loggingMode ?? 'Snapshot');
  const interval = useSignal(String(existing?.updateIntervalSeconds ?? 10));
  const autoConnect = useSignal(existing?.autoConnect ?? true);
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const busy = useSignal(false);
  const confirmingDelete = useSignal(false);
  const known = usePoll(
    () =>
      can('CollectionManage') ? api<Collection[]>('/api/v2/Collections') : Promise.resolve([]),
    0,
  );
  const collectionText = useSignal((existing?.collections ?? []).join(', '));

  const errorAt = (field: string): string | undefined => {
    const entries = Object.entries(errors.value);
    return entries.find(
      ([path]) => path === field || path.startsWith(`${field}[`) || path.startsWith(`${field}.`),
    )?.[1];
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    busy.value = true;
    errors.value = {};
    formError.value = '';
    const authentication: Record<string, string> = { mode: mode.value };
    for (const field of credentialFields[mode.value]) {
      authentication[field.key] = String(credentials.value[field.key] ?? '');
    }
    const chosen =
      can('CollectionManage') && known.data
        ? collections.value
        : collectionText.value
            .split(',')
            .map((text) => text.trim())
            .filter(Boolean);
    const intervalText = interval.value.trim();
    const { state: _state, ...stored } = existing ?? ({} as Partial<WebhookPublisher>);
    // Whatever the form does not show (caFile, signing secret, gzip…) goes back as it came.
    const body = {
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
    };
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
      if (error instanceof ApiError) {
        errors.value = error.fieldErrors();
        const shown = new Set(fieldIds(mode.value));
        const elsewhere = (error.problem.errors ?? []).filter(
          (entry) =>
            ![...shown].some((field) => entry.path === field || entry.path.startsWith(`${field}[`)),
        );
        formError.value =
          elsewhere.length > 0
            ? `${error.message} ${elsewhere.map((entry) => `${entry.path}: ${entry.message}`).join(' ')}`
            : error.problem.errors?.length
              ? 'Some fields need attention.'
              : error.message;
      } else {
        formError.value = 'The gateway could not be reached.';
      }
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

  const control = (id: string, hint?: string) => ({
    id,
    'aria-invalid': errorAt(id) ? true : undefined,
    'aria-describedby': describedBy(id, errorAt(id), hint),
  });
  const collectionNames = [
    ...new Set([...(known.data ?? []).map((collection) => collection.name), ...collections.value]),
  ];

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
      {can('CollectionManage') && known.data ? (
        <fieldset
          class={`field${errorAt('collections') ? ' invalid' : ''}`}
          aria-describedby={describedBy('collections', errorAt('collections'))}
        >
          <legend>Collections</legend>
          {collectionNames.length === 0 ? (
            <p class="muted">No collections yet: create one on the Collections page.</p>
          ) : (
            collectionNames.map((collection) => (
              <label key={collection} class="check">
                <input
                  type="checkbox"
                  checked={collections.value.includes(collection)}
                  onChange={(event) => {
                    const checked = (event.target as HTMLInputElement).checked;
                    collections.value = checked
                      ? [...collections.value, collection]
                      : collections.value.filter((entry) => entry !== collection);
                  }}
                />{' '}
                {collection}
              </label>
            ))
          )}
          {errorAt('collections') ? (
            <p id="collections-error" class="field-error" role="alert">
              {errorAt('collections')}
            </p>
          ) : null}
        </fieldset>
      ) : (
        <Field
          id="collections"
          label="Collections"
          error={errorAt('collections')}
          hint="Names, separated by commas."
        >
          <input
            {...control('collections', 'hint')}
            value={collectionText.value}
            onInput={(event) => {
              collectionText.value = (event.target as HTMLInputElement).value;
            }}
          />
        </Field>
      )}
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
      <Field
        id="updateIntervalSeconds"
        label="Update Interval (Seconds)"
        error={errorAt('updateIntervalSeconds')}
        hint="1 to 86400."
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
      {formError.value ? (
        <p class="form-error" role="alert">
          {formError.value}
        </p>
      ) : null}
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
  ];
}
