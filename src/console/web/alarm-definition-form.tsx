import { useState } from 'preact/hooks';
import { api } from './api-client';
import { type AlarmDefinition, alarmPriorities } from './api-types';
import { describedBy, Field } from './field';
import { FormEnd } from './form-end';
import { errorAt, fieldErrorsOf, formMessage } from './form-errors';
import { optionsOf } from './select-field';
import { TextField } from './text-field';

const conditions = [
  'High',
  'HighHigh',
  'Low',
  'LowLow',
  'Deviation',
  'RateOfChange',
  'Digital',
  'BadQuality',
  'Expression',
] as const;

/** Conditions that compare with a limit (and take a deadband). */
const limitConditions: ReadonlySet<string> = new Set([
  'High',
  'HighHigh',
  'Low',
  'LowLow',
  'Deviation',
  'RateOfChange',
]);

/** The text fields of the form (numbers are typed as text and sent as numbers when they are). */
type Texts = Record<
  | 'name'
  | 'source'
  | 'limit'
  | 'deadband'
  | 'setpoint'
  | 'value'
  | 'expression'
  | 'onDelayMs'
  | 'offDelayMs'
  | 'severity'
  | 'area'
  | 'message'
  | 'reAlarmAfterMs'
  | 'suppressWhen'
  | 'maxShelveMinutes',
  string
>;

type ValueType = 'boolean' | 'number' | 'string';

const text = (value: unknown): string => (value === undefined ? '' : String(value));

function textsOf(existing: AlarmDefinition | undefined): Texts {
  return {
    name: text(existing?.name),
    source: text(existing?.source),
    limit: text(existing?.limit),
    deadband: text(existing?.deadband),
    setpoint: text(existing?.setpoint),
    value: text(existing?.value),
    expression: text(existing?.expression),
    onDelayMs: text(existing?.onDelayMs),
    offDelayMs: text(existing?.offDelayMs),
    severity: text(existing?.severity),
    area: text(existing?.area),
    message: text(existing?.message),
    reAlarmAfterMs: text(existing?.reAlarmAfterMs),
    suppressWhen: text(existing?.suppressWhen),
    maxShelveMinutes: text(existing?.maxShelveMinutes),
  };
}

/** A number typed as text: the number, or the text itself for the server to refuse at its field. */
function numberOf(typed: string): number | string | undefined {
  const trimmed = typed.trim();
  if (trimmed === '') return undefined;
  const parsed = Number(trimmed);
  return Number.isFinite(parsed) ? parsed : trimmed;
}

/** Props of {@link AlarmDefinitionForm}. */
export interface AlarmDefinitionFormProps {
  /** The definition to edit; absent to create one. */
  existing?: AlarmDefinition;
  onDone(): void;
}

/**
 * Create or edit an alarm definition (`PUT /api/v2/Alerts/Definitions/{name}`): the fields of
 * the profile's `alarms[]`, those of the chosen condition only (limit and deadband for limit
 * conditions, setpoint for Deviation, the alarm value for Digital, the expression for
 * Expression). The server validates; its messages appear at their fields.
 */
export function AlarmDefinitionForm({ existing, onDone }: AlarmDefinitionFormProps) {
  const [texts, setTexts] = useState<Texts>(textsOf(existing));
  const [condition, setCondition] = useState<string>(existing?.condition ?? 'High');
  const [priority, setPriority] = useState<string>(existing?.priority ?? 'Medium');
  const [valueType, setValueType] = useState<ValueType>(
    typeof existing?.value === 'number'
      ? 'number'
      : typeof existing?.value === 'string'
        ? 'string'
        : 'boolean',
  );
  const [latching, setLatching] = useState(existing?.latching ?? false);
  const [enabled, setEnabled] = useState(existing?.enabled ?? true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  const isLimit = limitConditions.has(condition);
  const shown = [
    'name',
    'source',
    'condition',
    ...(isLimit ? ['limit', 'deadband'] : []),
    ...(condition === 'Deviation' ? ['setpoint'] : []),
    ...(condition === 'Digital' ? ['value'] : []),
    ...(condition === 'Expression' ? ['expression'] : []),
    'priority',
    'severity',
    'area',
    'message',
    'onDelayMs',
    'offDelayMs',
    'latching',
    'reAlarmAfterMs',
    'suppressWhen',
    'maxShelveMinutes',
    'enabled',
  ];

  const body = (): Record<string, unknown> => {
    const trimmed = (key: keyof Texts) => texts[key].trim() || undefined;
    const digital = (): unknown => {
      const typed = texts.value.trim();
      // The select shows true until false is chosen.
      if (valueType === 'boolean') return typed !== 'false';
      if (valueType === 'number') return numberOf(typed);
      return typed === '' ? undefined : texts.value;
    };
    const setpoint = () => {
      const typed = texts.setpoint.trim();
      if (typed === '') return undefined;
      const parsed = Number(typed);
      return Number.isFinite(parsed) ? parsed : typed;
    };
    const fields: Record<string, unknown> = {
      name: texts.name.trim(),
      source: trimmed('source'),
      condition,
      limit: isLimit ? numberOf(texts.limit) : undefined,
      deadband: isLimit ? numberOf(texts.deadband) : undefined,
      setpoint: condition === 'Deviation' ? setpoint() : undefined,
      value: condition === 'Digital' ? digital() : undefined,
      expression: condition === 'Expression' ? trimmed('expression') : undefined,
      onDelayMs: numberOf(texts.onDelayMs),
      offDelayMs: numberOf(texts.offDelayMs),
      priority,
      severity: numberOf(texts.severity),
      area: trimmed('area'),
      message: trimmed('message'),
      latching,
      reAlarmAfterMs: numberOf(texts.reAlarmAfterMs),
      suppressWhen: trimmed('suppressWhen'),
      maxShelveMinutes: numberOf(texts.maxShelveMinutes),
      enabled,
    };
    return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setFormError('');
    const name = existing?.name ?? texts.name.trim();
    try {
      if (!name) {
        setErrors({ name: 'Required.' });
        setFormError('Some fields need attention.');
        return;
      }
      await api(`/api/v2/Alerts/Definitions/${encodeURIComponent(name)}`, {
        method: 'PUT',
        body: body(),
      });
      onDone();
    } catch (caught) {
      setErrors(fieldErrorsOf(caught));
      setFormError(formMessage(caught, shown));
    } finally {
      setBusy(false);
    }
  };

  const at = (field: string) => errorAt(errors, field);
  const input = (id: keyof Texts, label: string, hint?: string, extra: object = {}) => (
    <TextField
      id={`def-${id}`}
      label={label}
      error={at(id)}
      hint={hint}
      value={texts[id]}
      onValue={(typed) => setTexts({ ...texts, [id]: typed })}
      {...extra}
    />
  );
  const choice = (
    id: 'condition' | 'priority',
    label: string,
    value: string,
    set: (value: string) => void,
    options: readonly string[],
  ) => (
    <Field id={`def-${id}`} label={label} error={at(id)}>
      <select
        id={`def-${id}`}
        value={value}
        aria-describedby={describedBy(`def-${id}`, at(id))}
        onChange={(event) => set(event.currentTarget.value)}
      >
        {optionsOf(options)}
      </select>
    </Field>
  );
  const title = existing ? `Edit alarm ${existing.name}` : 'New alarm definition';

  return (
    <form class="form alarm-definition-form" aria-label={title} onSubmit={submit} noValidate>
      <h2 class="section-title">{title}</h2>
      {existing ? (
        <p class="hint">The name cannot change: it is the alarm's journal and state tag path.</p>
      ) : null}
      {input('name', 'Name', 'Letters, digits and _ . : - ; also the state tags Alarms/<name>/….', {
        disabled: existing !== undefined,
      })}
      {choice('condition', 'Condition', condition, setCondition, conditions)}
      {input(
        'source',
        'Source tag',
        condition === 'Expression'
          ? 'Optional for Expression: lends its unit to the message.'
          : 'The full tag path watched, e.g. Demo/Line1/Temperature.',
      )}
      {isLimit
        ? input(
            'limit',
            'Limit',
            condition === 'Deviation'
              ? 'The largest distance allowed from the setpoint (> 0).'
              : condition === 'RateOfChange'
                ? 'The largest change per second allowed (> 0).'
                : "In the source's unit.",
            { inputMode: 'decimal' },
          )
        : null}
      {isLimit
        ? input(
            'deadband',
            'Deadband',
            'The value must come back by more than this before the alarm clears. Default 0.',
            { inputMode: 'decimal' },
          )
        : null}
      {condition === 'Deviation'
        ? input('setpoint', 'Setpoint', 'A number, or the tag path of the setpoint.')
        : null}
      {condition === 'Digital' ? (
        <>
          <Field id="def-value-type" label="Alarm value type">
            <select
              id="def-value-type"
              value={valueType}
              onChange={(event) => setValueType(event.currentTarget.value as ValueType)}
            >
              <option value="boolean">Boolean (true or false)</option>
              <option value="number">Number</option>
              <option value="string">Text</option>
            </select>
          </Field>
          {valueType === 'boolean' ? (
            <Field id="def-value" label="Alarm value" error={at('value')}>
              <select
                id="def-value"
                value={texts.value === 'false' ? 'false' : 'true'}
                aria-describedby={describedBy('def-value', at('value'))}
                onChange={(event) => setTexts({ ...texts, value: event.currentTarget.value })}
              >
                <option value="true">true</option>
                <option value="false">false</option>
              </select>
            </Field>
          ) : (
            input('value', 'Alarm value', 'The value that is the alarm.')
          )}
        </>
      ) : null}
      {condition === 'Expression'
        ? input(
            'expression',
            'Expression',
            'A boolean expression of the derived-tags language, e.g. {Line1/Temp} > 90.',
          )
        : null}
      {choice('priority', 'Priority', priority, setPriority, alarmPriorities)}
      {input(
        'severity',
        'Severity',
        '1–1000. Empty: by priority (Low 250, Medium 500, High 750, Urgent 1000).',
        { inputMode: 'numeric' },
      )}
      {input('area', 'Area', 'Segments joined by /, e.g. Hall2/Ovens.')}
      {input('message', 'Message', '{value}, {limit}, {unit} and {name} are filled in.')}
      {input('onDelayMs', 'On delay (ms)', 'How long the condition must hold. Default 0.', {
        inputMode: 'numeric',
      })}
      {input('offDelayMs', 'Off delay (ms)', 'How long it must be gone to clear. Default 0.', {
        inputMode: 'numeric',
      })}
      {input(
        'reAlarmAfterMs',
        'Re-alarm after (ms)',
        'Announce an unacknowledged alarm again after this long. Empty: never.',
        { inputMode: 'numeric' },
      )}
      {input(
        'suppressWhen',
        'Suppress when',
        'A boolean expression: while true the alarm is suppressed by design.',
      )}
      {input('maxShelveMinutes', 'Longest shelve (minutes)', 'Default 480.', {
        inputMode: 'numeric',
      })}
      <label class="check">
        <input
          type="checkbox"
          checked={latching}
          onChange={(event) => setLatching(event.currentTarget.checked)}
        />
        Latching: stays active after the condition clears, until acknowledged
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={enabled}
          onChange={(event) => setEnabled(event.currentTarget.checked)}
        />
        Enabled
      </label>
      <FormEnd
        error={formError}
        busy={busy}
        submit={existing ? 'Save' : 'Create'}
        onCancel={onDone}
      />
    </form>
  );
}
