import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { ApiError, api, encodePath, failureMessage } from './api-client';
import type {
  DerivedTagEntry,
  DerivedTagView,
  DerivedTestResult,
  Problem,
  Sample,
} from './api-types';
import { controlAttributes, Field } from './field';
import { FormError } from './form-error';
import { fieldErrorsOf, formMessage } from './form-errors';
import { formatValue } from './format';
import { QualityBadge } from './quality-badge';
import { can } from './session';
import { Table } from './table';
import { boundTo, TextField } from './text-field';
import { usePoll } from './use-poll';

/** A value as the Tags page shows it (an evaluation has the value and quality of a sample). */
const shown = (evaluation: Pick<Sample, 'value' | 'quality'> | undefined) =>
  formatValue(evaluation as Sample | undefined);

/** How long the editor waits after the last keystroke before it asks for a preview, ms. */
const previewDelayMs = 400;

/**
 * The derived tags of the Drivers page: each with its expression and last evaluation, and, for
 * accounts that may change them (DriverManage and DerivedTagManage), an editor.
 */
export function DerivedTagsSection() {
  const tags = usePoll(
    () =>
      api<{ derivedTags: DerivedTagView[] }>('/api/v2/DerivedTags').then(
        (answer) => answer.derivedTags,
      ),
    2_000,
  );
  const editing = useSignal<DerivedTagView | 'new' | undefined>(undefined);
  const mayEdit = can('DriverManage') && can('DerivedTagManage');
  const drivers = [...new Set((tags.data ?? []).map((tag) => tag.driver))];
  const done = () => {
    editing.value = undefined;
    tags.reload();
  };
  return (
    <section class="panel" aria-labelledby="derived-title">
      <h2 id="derived-title">Derived tags</h2>
      <FormError>{tags.error}</FormError>
      {!tags.data ? (
        <p role="status">Loading…</p>
      ) : tags.data.length === 0 ? (
        <p>No derived tags: add one to compute a value from other tags.</p>
      ) : (
        // Stacked at phone width: an overflowing table with nothing to focus could not be
        // scrolled from the keyboard (an Operator's view has no Edit buttons).
        <Table
          class="stack-table"
          columns={['Tag', 'Expression', 'Value', 'Quality', mayEdit && 'Actions']}
        >
          {tags.data.map((tag) => (
            <tr key={tag.fullTagId}>
              <td class="tag-path">{tag.fullTagId}</td>
              <td data-label="Expression">
                <code>{tag.expression}</code>
              </td>
              <td data-label="Value">
                {shown(tag.lastEvaluation)}
                {tag.unit && tag.lastEvaluation?.value !== undefined ? ` ${tag.unit}` : ''}
              </td>
              <td data-label="Quality">
                {tag.lastEvaluation ? <QualityBadge quality={tag.lastEvaluation.quality} /> : null}
              </td>
              {mayEdit ? (
                <td>
                  <button
                    type="button"
                    aria-label={`Edit ${tag.fullTagId}`}
                    onClick={() => {
                      editing.value = tag;
                    }}
                  >
                    Edit
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
      {mayEdit && editing.value === undefined ? (
        <div class="buttons">
          <button
            type="button"
            class="primary"
            onClick={() => {
              editing.value = 'new';
            }}
          >
            New derived tag
          </button>
        </div>
      ) : null}
      {editing.value !== undefined ? (
        <DerivedTagEditor
          key={editing.value === 'new' ? 'new' : editing.value.fullTagId}
          existing={editing.value === 'new' ? undefined : editing.value}
          drivers={drivers}
          onDone={done}
        />
      ) : null}
    </section>
  );
}

/** Props of {@link DerivedTagEditor}. */
interface EditorProps {
  existing: DerivedTagView | undefined;
  /** The derived-tag drivers there are, offered for a new tag. */
  drivers: string[];
  onDone(): void;
}

/** A syntax or check error of the expression, where the API placed it. */
interface PositionedError {
  message: string;
  line: number;
  column: number;
  expected?: string;
}

type Preview =
  | { kind: 'result'; result: DerivedTestResult }
  | { kind: 'error'; error: PositionedError }
  | { kind: 'failed'; message: string };

/**
 * Creates or changes one derived tag: its expression is evaluated against the live gateway as it
 * is typed (`DerivedTags/Test`), a syntax error is shown at its line and column, and the inputs
 * are listed with their quality; saving replaces the tag in its driver's profile entry (or adds
 * a derived-tag driver of that name) through the Drivers API.
 */
function DerivedTagEditor({ existing, drivers, onDone }: EditorProps) {
  const driver = useSignal(existing?.driver ?? drivers[0] ?? 'Derived');
  const name = useSignal(existing ? existing.fullTagId.slice(existing.driver.length + 1) : '');
  const expression = useSignal(existing?.expression ?? '');
  const unit = useSignal(existing?.unit ?? '');
  const description = useSignal(existing?.description ?? '');
  const preview = useSignal<Preview | undefined>(undefined);
  const errors = useSignal<Record<string, string>>({});
  const formError = useSignal('');
  const busy = useSignal(false);

  useEffect(() => {
    const text = expression.value;
    if (text.trim() === '') {
      preview.value = undefined;
      return;
    }
    let current = true;
    const timer = setTimeout(() => {
      api<DerivedTestResult>('/api/v2/DerivedTags/Test', {
        method: 'POST',
        body: { expression: text, driver: driver.value },
      })
        .then((result) => {
          if (current) preview.value = { kind: 'result', result };
        })
        .catch((error: unknown) => {
          if (!current) return;
          const positioned = positionedError(error);
          preview.value = positioned
            ? { kind: 'error', error: positioned }
            : {
                kind: 'failed',
                message: failureMessage(error),
              };
        });
    }, previewDelayMs);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [expression.value, driver.value]);

  const fieldError = (field: string) =>
    Object.entries(errors.value).find(([path]) => path.endsWith(field))?.[1];
  const syntax = preview.value?.kind === 'error' ? preview.value.error : undefined;
  const expressionError = fieldError('.expression') ?? (syntax ? syntaxText(syntax) : undefined);
  // The profile's rules name the driver entry itself (its root) for a driver-level problem.
  const driverError = fieldError('(root)');

  const save = async (event: Event) => {
    event.preventDefault();
    errors.value = {};
    formError.value = '';
    busy.value = true;
    const entry: DerivedTagEntry = {
      name: name.value.trim(),
      expression: expression.value,
      ...(unit.value.trim() ? { unit: unit.value.trim() } : {}),
      ...(description.value.trim() ? { description: description.value.trim() } : {}),
    };
    try {
      await saveTag(driver.value.trim(), existing, entry);
      onDone();
    } catch (error) {
      errors.value = fieldErrorsOf(error);
      formError.value = formMessage(error, ['name', 'tags']);
    } finally {
      busy.value = false;
    }
  };

  const remove = async () => {
    if (!existing) return;
    busy.value = true;
    try {
      await removeTag(existing);
      onDone();
    } catch (error) {
      formError.value = formMessage(error, []);
    } finally {
      busy.value = false;
    }
  };

  return (
    <form
      class="form derived-editor"
      onSubmit={save}
      noValidate
      aria-labelledby="derived-form-title"
    >
      <h3 id="derived-form-title">{existing ? `Edit ${existing.fullTagId}` : 'New derived tag'}</h3>
      <Field id="derived-driver" label="Driver" error={driverError} hint={driverHint}>
        <input
          {...controlAttributes('derived-driver', driverError, driverHint)}
          list="derived-drivers"
          value={driver.value}
          disabled={Boolean(existing)}
          onInput={(event) => {
            driver.value = (event.target as HTMLInputElement).value;
          }}
        />
        <datalist id="derived-drivers">
          {drivers.map((each) => (
            <option key={each} value={each} />
          ))}
        </datalist>
      </Field>
      <TextField
        id="derived-name"
        label="Name"
        error={fieldError('.name')}
        disabled={Boolean(existing)}
        placeholder="Line1/Flow"
        {...boundTo(name)}
      />
      <Field
        id="derived-expression"
        label="Expression"
        error={expressionError}
        hint="Tags in braces, {Line1/Pump/Speed}; {./Name} for a tag of the same driver; functions as docs/derived-tags.md lists."
      >
        <textarea
          {...controlAttributes('derived-expression', expressionError, 'hint')}
          rows={3}
          spellcheck={false}
          value={expression.value}
          onInput={(event) => {
            expression.value = (event.target as HTMLTextAreaElement).value;
          }}
        />
      </Field>
      {syntax ? (
        <pre class="expression-caret" aria-hidden="true" data-testid="expression-caret">
          {caretLines(expression.value, syntax)}
        </pre>
      ) : null}
      <TextField id="derived-unit" label="Unit" error={fieldError('.unit')} {...boundTo(unit)} />
      <TextField
        id="derived-description"
        label="Description"
        error={fieldError('.description')}
        {...boundTo(description)}
      />
      <PreviewPanel preview={preview.value} />
      <FormError>{formError.value}</FormError>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy.value}>
          {existing ? 'Save' : 'Create'}
        </button>
        {existing ? (
          <button type="button" onClick={remove} disabled={busy.value}>
            Remove
          </button>
        ) : null}
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The driver field's hint. */
const driverHint = 'A derived-tag driver; a new name adds one.';

/** The live evaluation: value and quality, and each input with its quality. */
function PreviewPanel({ preview }: { preview: Preview | undefined }) {
  if (preview === undefined || preview.kind === 'error') return null;
  if (preview.kind === 'failed') {
    return (
      <p class="form-error" role="status">
        Preview unavailable: {preview.message}
      </p>
    );
  }
  const { result } = preview;
  return (
    <section class="derived-preview" aria-label="Preview" aria-live="polite">
      <p>
        Now: <output data-testid="derived-preview-value">{shown(result)}</output>{' '}
        <QualityBadge quality={result.quality} />
        {result.message ? <span class="muted"> {result.message}</span> : null}
      </p>
      {result.inputs.length > 0 ? (
        <ul class="derived-inputs" aria-label="Inputs">
          {result.inputs.map((input) => (
            <li key={input.fullTagId}>
              <span class="tag-path">{input.fullTagId}</span>{' '}
              {input.sample ? (
                <>
                  {formatValue(input.sample)} <QualityBadge quality={input.sample.quality} />
                </>
              ) : (
                <span class="muted">does not exist</span>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

/** The positioned error of an `expression-invalid` problem, if it is one. */
function positionedError(error: unknown): PositionedError | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const problem: Problem = error.problem;
  const first = problem.errors?.[0];
  if (problem.code !== 'expression-invalid' || !first || first.line === undefined) return undefined;
  return {
    message: first.message,
    line: first.line,
    column: first.column ?? 1,
    ...(first.expected !== undefined ? { expected: first.expected } : {}),
  };
}

function syntaxText(error: PositionedError): string {
  const expected = error.expected ? ` Expected ${error.expected}.` : '';
  return `Line ${error.line}, column ${error.column}: ${error.message}${expected}`;
}

/** The line of the error with a caret under its column. */
function caretLines(text: string, error: PositionedError): string {
  const line = text.split('\n')[error.line - 1] ?? '';
  return `${line}\n${' '.repeat(Math.max(0, error.column - 1))}^`;
}

/** The driver's profile entry, or undefined when there is none of that name. */
async function configurationOf(
  driver: string,
): Promise<{ type: string; name: string; tags: DerivedTagEntry[] } | undefined> {
  try {
    return await api(`/api/v2/Drivers/${encodePath(driver)}/Configuration`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/** Replaces or adds the tag in its driver's entry, keeping the tag's other settings. */
async function saveTag(
  driver: string,
  existing: DerivedTagView | undefined,
  entry: DerivedTagEntry,
): Promise<void> {
  const configuration = await configurationOf(driver);
  if (configuration === undefined) {
    await api('/api/v2/Drivers', {
      method: 'POST',
      body: { type: 'derived', name: driver, tags: [entry] },
    });
    return;
  }
  if (configuration.type !== 'derived') {
    throw new ApiError({
      status: 400,
      detail: `${driver} is a ${configuration.type} driver, not a derived-tag driver: choose another name.`,
    });
  }
  const tags = [...configuration.tags];
  const index = existing ? tags.findIndex((tag) => tag.name === entry.name) : -1;
  const kept = index >= 0 ? tags[index] : undefined;
  const merged: DerivedTagEntry = {
    ...(kept ?? {}),
    ...entry,
    ...(entry.unit === undefined ? { unit: undefined } : {}),
    ...(entry.description === undefined ? { description: undefined } : {}),
  };
  if (index >= 0) tags[index] = merged;
  else tags.push(merged);
  await api(`/api/v2/Drivers/${encodePath(driver)}`, {
    method: 'PUT',
    body: { ...configuration, tags: tags.map(withoutUndefined) },
  });
}

/** Removes the tag from its driver's entry; the driver goes with its last tag. */
async function removeTag(existing: DerivedTagView): Promise<void> {
  const configuration = await configurationOf(existing.driver);
  if (configuration === undefined) return;
  const name = existing.fullTagId.slice(existing.driver.length + 1);
  const tags = configuration.tags.filter((tag) => tag.name !== name);
  if (tags.length === 0) {
    await api(`/api/v2/Drivers/${encodePath(existing.driver)}`, { method: 'DELETE' });
    return;
  }
  await api(`/api/v2/Drivers/${encodePath(existing.driver)}`, {
    method: 'PUT',
    body: { ...configuration, tags },
  });
}

function withoutUndefined(entry: DerivedTagEntry): DerivedTagEntry {
  return Object.fromEntries(
    Object.entries(entry).filter(([, value]) => value !== undefined),
  ) as unknown as DerivedTagEntry;
}
