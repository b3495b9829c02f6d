import { useSignal } from '@preact/signals';
import { tagColumns } from '../../tags/tag-csv';
import { saveItem } from './api-client';
import {
  driverSettings,
  driverTypeNames,
  newDriverEntries,
  valueAt,
  withValue,
} from './driver-fields';
import { describedBy, Field, FieldError } from './field';
import { FormEnd } from './form-end';
import { FormError } from './form-error';
import { fieldErrorsOf, formMessage } from './form-errors';
import { optionsOf } from './select-field';
import {
  downloadTagsCsv,
  type ImportPreview,
  ImportPreviewPanel,
  previewImport,
} from './tag-import';
import { rowsToTags, type TagRow, TagTable, tagRows } from './tag-table';

/** Props of {@link DriverForm}. */
export interface DriverFormProps {
  /** The entry to edit, as `GET /api/v2/Drivers/{name}/Configuration` answers; absent to add. */
  existing?: Record<string, unknown>;
  onDone(): void;
}

/**
 * Add or edit a driver (`DriverManage`): its type, name and connection settings, its tags in an
 * editable table, and the tags' CSV import (with a preview of what changes and the problems per
 * line before anything is applied) and export. Saved through the Drivers API, which validates
 * with the profile's schema; its messages appear at their fields and cells. Settings the form
 * does not show are sent back as they came.
 */
export function DriverForm({ existing, onDone }: DriverFormProps) {
  const entry = useSignal<Record<string, unknown>>(
    existing ? withoutTags(existing) : withoutTags(newDriverEntries.modbus ?? {}),
  );
  const type = String(entry.value.type);
  const columns = tagColumns[type];
  const rows = useSignal<TagRow[]>(
    columns && Array.isArray(existing?.tags)
      ? tagRows(columns, existing.tags as Record<string, unknown>[])
      : [],
  );
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const busy = useSignal(false);
  const preview = useSignal<ImportPreview | undefined>(undefined);
  const importNotice = useSignal('');
  const settings = driverSettings[type] ?? [];
  const shown = settings.filter((setting) => !setting.when || setting.when(entry.value));
  const converted = columns ? rowsToTags(columns, rows.value) : { tags: [], errors: {} };
  // The table's own messages (a cell that is not a number) show at once; the API's after a save.
  const allErrors = { ...errors.value, ...converted.errors };
  const errorAt = (path: string) => allErrors[path];
  const bodyOf = (tags = converted.tags) => (columns ? { ...entry.value, tags } : entry.value);

  const save = async (tags = converted.tags) => {
    busy.value = true;
    errors.value = {};
    formError.value = '';
    try {
      await saveItem(
        '/api/v2/Drivers',
        existing === undefined ? undefined : String(existing.name),
        bodyOf(tags),
      );
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = formMessage(error, [
        'tags',
        ...shown.map((setting) => setting.path),
        'name',
      ]);
    } finally {
      busy.value = false;
    }
  };

  const submit = (event: Event) => {
    event.preventDefault();
    if (Object.keys(converted.errors).length > 0) {
      formError.value = 'Some tag cells need attention: see the messages in the table.';
      return;
    }
    void save();
  };

  const importFile = async (file: File) => {
    importNotice.value = '';
    preview.value = undefined;
    if (Object.keys(converted.errors).length > 0) {
      importNotice.value =
        'Correct the tag cells marked in the table first: the import compares with them.';
      return;
    }
    try {
      preview.value = await previewImport(
        entry.value,
        converted.tags,
        file.name,
        await file.text(),
        !existing,
      );
    } catch (error) {
      importNotice.value = error instanceof Error ? error.message : String(error);
    }
  };

  const apply = async () => {
    const chosen = preview.value;
    if (!chosen || chosen.problems.length > 0 || !columns) return;
    rows.value = tagRows(columns, chosen.tags);
    preview.value = undefined;
    await save(chosen.tags);
  };

  const control = (id: string, hint?: string) => ({
    id: `driver-${id}`,
    'aria-invalid': errorAt(id) ? true : undefined,
    'aria-describedby': describedBy(`driver-${id}`, errorAt(id), hint),
  });

  const title = existing ? `Edit driver ${String(existing.name)}` : 'New driver';
  return (
    <form
      class="panel form driver-form"
      onSubmit={submit}
      noValidate
      aria-labelledby="driver-form-title"
    >
      <h1 id="driver-form-title">{title}</h1>
      {existing ? null : (
        <Field id="driver-type" label="Type" error={errorAt('type')}>
          <select
            {...control('type')}
            value={type}
            onChange={(event) => {
              const chosen = (event.target as HTMLSelectElement).value;
              const fresh = newDriverEntries[chosen];
              if (!fresh) return;
              entry.value = { ...withoutTags(fresh), name: entry.value.name };
              rows.value = [];
              errors.value = {};
              preview.value = undefined;
            }}
          >
            {Object.keys(newDriverEntries).map((option) => (
              <option key={option} value={option}>
                {driverTypeNames[option] ?? option}
              </option>
            ))}
          </select>
        </Field>
      )}
      <Field
        id="driver-name"
        label="Name"
        error={errorAt('name')}
        hint="Letters, digits and _ . : -; the first segment of its tags."
      >
        <input
          {...control('name', 'hint')}
          value={String(entry.value.name ?? '')}
          disabled={Boolean(existing)}
          autocomplete="off"
          onInput={(event) => {
            entry.value = { ...entry.value, name: (event.target as HTMLInputElement).value };
          }}
        />
      </Field>
      {shown.map((setting) => {
        const value = valueAt(entry.value, setting.path);
        const update = (next: unknown) => {
          if (setting.switches) {
            const parent = setting.path.split('.').slice(0, -1).join('.');
            const fresh = setting.switches[String(next)];
            if (parent && fresh) {
              entry.value = withValue(entry.value, parent, { ...fresh });
              return;
            }
          }
          entry.value = withValue(entry.value, setting.path, next);
        };
        const id = setting.path;
        if (setting.kind === 'boolean') {
          return (
            <div key={id} class={`field check-field${errorAt(id) ? ' invalid' : ''}`}>
              <label class="check">
                <input
                  {...control(id)}
                  type="checkbox"
                  checked={value === true}
                  onChange={(event) => update((event.target as HTMLInputElement).checked)}
                />{' '}
                {setting.label}
              </label>
              {setting.hint ? <small class="hint">{setting.hint}</small> : null}
              <FieldError id={`driver-${id}`} error={errorAt(id)} />
            </div>
          );
        }
        return (
          <Field
            key={id}
            id={`driver-${id}`}
            label={setting.label}
            error={errorAt(id)}
            hint={setting.hint}
          >
            {setting.kind === 'enum' ? (
              <select
                {...control(id, setting.hint)}
                value={String(value ?? '')}
                onChange={(event) => update((event.target as HTMLSelectElement).value)}
              >
                {optionsOf(setting.options ?? [])}
              </select>
            ) : (
              <input
                {...control(id, setting.hint)}
                type={setting.kind === 'password' ? 'password' : 'text'}
                inputMode={
                  setting.kind === 'int' || setting.kind === 'number' ? 'numeric' : undefined
                }
                autocomplete="off"
                value={value === undefined ? '' : String(value)}
                onInput={(event) => {
                  const text = (event.target as HTMLInputElement).value;
                  // Numbers go as numbers when they read as one; anything else goes as typed, so
                  // the API names the field rather than the form guessing.
                  if (setting.kind === 'int' || setting.kind === 'number') {
                    update(
                      text.trim() === ''
                        ? undefined
                        : /^-?\d+(\.\d+)?$/.test(text.trim())
                          ? Number(text)
                          : text,
                    );
                  } else update(text);
                }}
              />
            )}
          </Field>
        );
      })}
      <div class={`field check-field${errorAt('enabled') ? ' invalid' : ''}`}>
        <label class="check">
          <input
            id="driver-enabled"
            type="checkbox"
            checked={entry.value.enabled !== false}
            onChange={(event) => {
              entry.value = { ...entry.value, enabled: (event.target as HTMLInputElement).checked };
            }}
          />{' '}
          Enabled (runs; a disabled driver keeps its settings and serves no tags)
        </label>
      </div>
      <h2 class="section-title">Tags</h2>
      {columns ? (
        <>
          <p class="muted">
            One row per tag. A CSV file to import has a header row naming these columns (any order;
            only name is required) and one row per tag; the file is the whole list, and nothing
            changes before its preview is applied.
          </p>
          <div class="actions">
            <input
              id="driver-import"
              class="visually-hidden"
              type="file"
              accept=".csv,text/csv"
              onChange={(event) => {
                const input = event.target as HTMLInputElement;
                const file = input.files?.[0];
                input.value = '';
                if (file) void importFile(file);
              }}
            />
            <label class="button" for="driver-import">
              Import tags from CSV
            </label>
            <button
              type="button"
              disabled={rows.value.length === 0}
              aria-describedby={rows.value.length === 0 ? 'export-reason' : undefined}
              onClick={() => downloadTagsCsv(String(entry.value.name ?? ''), type, converted.tags)}
            >
              Export tags as CSV
            </button>
            {rows.value.length === 0 ? (
              <span id="export-reason" class="muted">
                No tags to export yet.
              </span>
            ) : null}
          </div>
          <FormError>{importNotice.value}</FormError>
          {preview.value ? (
            <ImportPreviewPanel
              preview={preview.value}
              busy={busy.value}
              onApply={() => void apply()}
              onCancel={() => {
                preview.value = undefined;
              }}
            />
          ) : null}
          {errorAt('tags') && !Object.keys(allErrors).some((path) => path.startsWith('tags[')) ? (
            <p class="field-error" role="alert">
              {errorAt('tags')}
            </p>
          ) : null}
          <TagTable
            columns={columns}
            rows={rows.value}
            onChange={(next) => (rows.value = next)}
            errors={allErrors}
          />
        </>
      ) : (
        <p>
          {type === 'can'
            ? 'The tags of a CAN driver are the signals of its DBC file: <driver>/<message>/<signal>.'
            : 'This driver type has no tag list to edit here.'}
        </p>
      )}
      <FormEnd
        error={formError.value}
        busy={busy.value}
        submit={existing ? 'Save' : 'Add driver'}
        onCancel={onDone}
      />
    </form>
  );
}

function withoutTags(entry: Record<string, unknown>): Record<string, unknown> {
  const { tags: _tags, ...rest } = entry;
  return rest;
}
