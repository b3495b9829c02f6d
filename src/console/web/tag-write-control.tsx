import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { ApiError, api } from './api-client';
import type { TagWriteResult } from './api-types';
import { describedBy, FieldError } from './field';
import type { WriteAccess } from './write-access';

/** What kind of control a tag takes, from its current value. */
type WriteKind = 'number' | 'boolean' | 'string';

/** Props of {@link TagWriteControl}. */
export interface TagWriteControlProps {
  path: string;
  access: WriteAccess;
  /** The tag's current value (its type chooses the control). */
  current: number | boolean | string | undefined;
  unit: string | undefined;
}

function kindOf(current: TagWriteControlProps['current'], access: WriteAccess): WriteKind {
  if (typeof current === 'boolean') return 'boolean';
  if (typeof current === 'string') return 'string';
  if (typeof current === 'number' || access.writeMin !== undefined) return 'number';
  return access.writeMax !== undefined ? 'number' : 'string';
}

/**
 * Why `value` is outside the tag's `writeMin`/`writeMax` ("95 °C is above the highest value,
 * 90 °C."), or undefined when it is inside (bounds included).
 */
export function outOfRange(
  value: number,
  access: WriteAccess,
  unit: string | undefined,
): string | undefined {
  const withUnit = (number: number) => `${number}${unit ? ` ${unit}` : ''}`;
  if (access.writeMax !== undefined && value > access.writeMax) {
    return `${withUnit(value)} is above the highest value, ${withUnit(access.writeMax)}.`;
  }
  if (access.writeMin !== undefined && value < access.writeMin) {
    return `${withUnit(value)} is below the lowest value, ${withUnit(access.writeMin)}.`;
  }
  return undefined;
}

/**
 * Writes one value to a writable tag: the value (a number outside `writeMin`/`writeMax` is
 * refused at the field), then a confirmation step naming value and tag,
 * then `POST /api/v2/Tags/Write` once (never retried) and its answer. The new value itself
 * arrives through the stream, as any other.
 */
export function TagWriteControl({ path, access, current, unit }: TagWriteControlProps) {
  const kind = kindOf(current, access);
  const draft = useSignal(kind === 'boolean' ? 'true' : '');
  const phase = useSignal<'edit' | 'confirm' | 'sending'>('edit');
  const fieldError = useSignal('');
  const outcome = useSignal<{ ok: boolean; text: string } | undefined>(undefined);
  const input = useRef<HTMLInputElement & HTMLSelectElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const id = 'tag-write-value';

  // Set when the confirmation step ends: the focus goes back to the value once it is enabled.
  const refocus = useRef(false);

  useEffect(() => {
    if (phase.value === 'confirm') confirmButton.current?.focus();
    if (phase.value === 'edit' && refocus.current) {
      refocus.current = false;
      input.current?.focus();
    }
  }, [phase.value]);

  const value = (): number | boolean | string | undefined => {
    if (kind === 'boolean') return draft.value === 'true';
    if (kind === 'string') return draft.value;
    const number = draft.value.trim() === '' ? Number.NaN : Number(draft.value);
    return Number.isFinite(number) ? number : undefined;
  };
  const shown = (): string => {
    if (kind === 'boolean') return draft.value === 'true' ? 'On (true)' : 'Off (false)';
    if (kind === 'string') return `"${draft.value}"`;
    return `${draft.value.trim()}${unit ? ` ${unit}` : ''}`;
  };

  const review = (event: Event) => {
    event.preventDefault();
    outcome.value = undefined;
    const next = value();
    if (next === undefined) {
      fieldError.value = 'Enter a number.';
      return;
    }
    // The range the hint states, checked before the confirmation step: a value the gateway
    // would refuse is never offered for confirming (the gateway checks it again anyway).
    const refused = typeof next === 'number' ? outOfRange(next, access, unit) : undefined;
    if (refused) {
      fieldError.value = refused;
      return;
    }
    fieldError.value = '';
    phase.value = 'confirm';
  };

  const cancel = () => {
    refocus.current = true;
    phase.value = 'edit';
  };

  const send = async () => {
    phase.value = 'sending';
    try {
      const answer = await api<{ results: TagWriteResult[] }>('/api/v2/Tags/Write', {
        method: 'POST',
        body: { writes: [{ fullTagId: path, value: value() }] },
      });
      const result = answer.results[0];
      outcome.value =
        result?.status === 'Good'
          ? { ok: true, text: 'Written.' }
          : {
              ok: false,
              text: `${result?.status ?? 'Bad'}${result?.reason ? ` (${result.reason})` : ''}: ${result?.message ?? 'the device did not take the value.'}`,
            };
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) {
        const fields = error.fieldErrors();
        fieldError.value = fields['writes[0].value'] ?? Object.values(fields)[0] ?? error.message;
      } else if (error instanceof ApiError && error.status === 429) {
        outcome.value = {
          ok: false,
          text: `Too many writes: nothing was written. ${error.message} Try again in a moment.`,
        };
      } else {
        outcome.value = { ok: false, text: `Not written: ${(error as Error).message}` };
      }
    }
    refocus.current = true;
    phase.value = 'edit';
  };

  const range =
    access.writeMin !== undefined || access.writeMax !== undefined
      ? `From ${access.writeMin ?? '−∞'} to ${access.writeMax ?? '∞'}${unit ? ` ${unit}` : ''}.`
      : undefined;
  const editing = phase.value === 'edit';
  const describe = describedBy(id, fieldError.value, range);

  return (
    <form class="tag-write" aria-labelledby="tag-write-title" onSubmit={review} noValidate>
      <h3 id="tag-write-title">Write a value</h3>
      <div class={`field${fieldError.value ? ' invalid' : ''}`}>
        <label for={id}>New value{unit ? ` (${unit})` : ''}</label>
        {kind === 'boolean' ? (
          <select
            id={id}
            ref={input}
            value={draft.value}
            disabled={!editing}
            aria-describedby={describe}
            onChange={(event) => {
              draft.value = (event.target as HTMLSelectElement).value;
            }}
          >
            <option value="true">On (true)</option>
            <option value="false">Off (false)</option>
          </select>
        ) : (
          <input
            id={id}
            ref={input}
            type={kind === 'number' ? 'number' : 'text'}
            step="any"
            {...(kind === 'number' && access.writeMin !== undefined
              ? { min: access.writeMin }
              : {})}
            {...(kind === 'number' && access.writeMax !== undefined
              ? { max: access.writeMax }
              : {})}
            value={draft.value}
            disabled={!editing}
            aria-invalid={fieldError.value ? true : undefined}
            aria-describedby={describe}
            onInput={(event) => {
              draft.value = (event.target as HTMLInputElement).value;
            }}
          />
        )}
        {range ? (
          <small id={`${id}-hint`} class="hint">
            {range}
          </small>
        ) : null}
        <FieldError id={id} error={fieldError.value} />
      </div>
      {phase.value === 'edit' ? (
        <button type="submit" class="primary">
          Write…
        </button>
      ) : (
        <fieldset
          class="confirm-write"
          aria-labelledby="tag-write-question"
          onKeyDown={(event) => {
            if (event.key === 'Escape' && phase.value === 'confirm') cancel();
          }}
        >
          <p id="tag-write-question">
            Write {shown()} to {path}?
          </p>
          <div class="buttons">
            <button
              type="button"
              class="primary"
              ref={confirmButton}
              disabled={phase.value === 'sending'}
              onClick={() => void send()}
            >
              Confirm
            </button>
            <button type="button" disabled={phase.value === 'sending'} onClick={cancel}>
              Cancel
            </button>
          </div>
        </fieldset>
      )}
      <p class={`write-outcome${outcome.value?.ok === false ? ' form-error' : ''}`} role="status">
        {outcome.value?.text ?? ''}
      </p>
    </form>
  );
}
