import type { Signal } from '@preact/signals';
import { describedBy, Field } from './field';
import { optionsOf } from './select-field';

/** The alarm priorities, lowest first (the API's order). */
const priorities = ['Low', 'Medium', 'High', 'Urgent'] as const;

/** A publisher's `alarms` as the form edits it: on or off, areas one per line, least priority. */
export interface AlarmFilterChoice {
  enabled: boolean;
  /** Areas, one per line; empty: every area. */
  areas: string;
  /** '' for the default (Low). */
  minPriority: string;
}

/** The form's choice of a publisher's `alarms` (absent: alarm transitions are not sent). */
export function alarmChoiceOf(alarms: unknown): AlarmFilterChoice {
  const filter = alarms as { areas?: string[]; minPriority?: string } | undefined;
  return {
    enabled: filter !== undefined,
    areas: (filter?.areas ?? []).join('\n'),
    minPriority: filter?.minPriority ?? '',
  };
}

/** The `alarms` the API takes, or undefined when alarm transitions are not sent. */
export function alarmsOfChoice(choice: AlarmFilterChoice): Record<string, unknown> | undefined {
  if (!choice.enabled) return undefined;
  const areas = choice.areas
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return {
    ...(areas.length > 0 ? { areas } : {}),
    ...(choice.minPriority ? { minPriority: choice.minPriority } : {}),
  };
}

/** Props of {@link AlarmFilterFields}. */
export interface AlarmFilterFieldsProps {
  choice: Signal<AlarmFilterChoice>;
  /** The API's message for a path under `alarms`. */
  errorAt(path: string): string | undefined;
}

/** "Also send alarm transitions", with the areas and the least priority they take. */
export function AlarmFilterFields({ choice, errorAt }: AlarmFilterFieldsProps) {
  const value = choice.value;
  const set = (patch: Partial<AlarmFilterChoice>) => {
    choice.value = { ...choice.value, ...patch };
  };
  return (
    <fieldset class="field-group">
      <legend>Alarm transitions</legend>
      <div class="field check-field">
        <label class="check">
          <input
            id="alarms.enabled"
            type="checkbox"
            checked={value.enabled}
            onChange={(event) => set({ enabled: (event.target as HTMLInputElement).checked })}
          />{' '}
          Also send alarm transitions as they happen
        </label>
      </div>
      {value.enabled ? (
        <>
          <Field
            id="alarms.areas"
            label="Alarm areas"
            error={errorAt('alarms.areas')}
            hint="One area per line; an area takes the areas below it. Empty: every alarm."
          >
            <textarea
              id="alarms.areas"
              rows={3}
              value={value.areas}
              aria-invalid={errorAt('alarms.areas') ? true : undefined}
              aria-describedby={describedBy('alarms.areas', errorAt('alarms.areas'), 'hint')}
              onInput={(event) => set({ areas: (event.target as HTMLTextAreaElement).value })}
            />
          </Field>
          <Field
            id="alarms.minPriority"
            label="Least alarm priority"
            error={errorAt('alarms.minPriority')}
          >
            <select
              id="alarms.minPriority"
              value={value.minPriority}
              aria-invalid={errorAt('alarms.minPriority') ? true : undefined}
              aria-describedby={describedBy('alarms.minPriority', errorAt('alarms.minPriority'))}
              onChange={(event) => set({ minPriority: (event.target as HTMLSelectElement).value })}
            >
              <option value="">Default (Low: every priority)</option>
              {optionsOf(priorities)}
            </select>
          </Field>
        </>
      ) : null}
    </fieldset>
  );
}
