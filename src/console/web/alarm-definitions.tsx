import { useState } from 'preact/hooks';
import { AlarmDefinitionForm } from './alarm-definition-form';
import { alarmValueText } from './alarm-words';
import { api, failureMessage } from './api-client';
import type { AlarmDefinition } from './api-types';
import { FormError } from './form-error';
import { Notice } from './notice';
import { PriorityBadge } from './priority-badge';
import { href, navigate, route } from './router';
import { can } from './session';
import { Table } from './table';
import { usePoll } from './use-poll';

/**
 * The alarm definitions of the profile (`GET /api/v2/Alerts/Definitions`), in profile order,
 * and for Administrators (AlertManage) the editor: New, Edit (`#/alarms/definitions/edit/<name>`)
 * and Delete with a confirmation step. Saving puts a definition in force at once.
 */
export function AlarmDefinitions() {
  const [, , action, name] = route.value.segments;
  const list = usePoll(() => api<AlarmDefinition[]>('/api/v2/Alerts/Definitions'), 0);
  const manage = can('AlertManage');
  const [confirming, setConfirming] = useState('');
  const [message, setMessage] = useState('');
  const [error, setError] = useState('');
  const back = () => {
    list.reload();
    navigate('alarms', 'definitions');
  };

  if (manage && action === 'new') {
    return <AlarmDefinitionForm onDone={back} />;
  }
  if (manage && action === 'edit' && name) {
    const existing = list.data?.find((definition) => definition.name === name);
    if (!existing) {
      return list.data ? (
        <FormError>No alarm definition named {name}.</FormError>
      ) : (
        <p role="status">Loading…</p>
      );
    }
    return <AlarmDefinitionForm key={name} existing={existing} onDone={back} />;
  }

  const remove = async (target: string) => {
    setError('');
    setMessage('');
    try {
      await api(`/api/v2/Alerts/Definitions/${encodeURIComponent(target)}`, { method: 'DELETE' });
      setMessage(`${target} deleted.`);
    } catch (caught) {
      setError(failureMessage(caught));
    }
    setConfirming('');
    list.reload();
  };

  return (
    <div class="alarm-definitions">
      <div class="panel-head">
        <h2 class="section-title">Definitions</h2>
        {manage ? (
          <a class="button primary" href={href('alarms', 'definitions', 'new')}>
            New alarm definition
          </a>
        ) : (
          <p class="hint">Editing definitions needs the AlertManage permission (Administrators).</p>
        )}
      </div>
      <Notice>{message}</Notice>
      <FormError>{error || list.error}</FormError>
      {!list.data ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : list.data.length === 0 ? (
        <p>The profile defines no alarms.</p>
      ) : (
        <Table
          class="stack-table"
          caption="Alarm definitions"
          columns={['Name', 'Condition', 'Priority', 'Area', 'Enabled', manage && 'Actions']}
        >
          {list.data.map((definition) => (
            <tr key={definition.name} data-definition={definition.name}>
              <th scope="row">{definition.name}</th>
              <td data-label="Condition">{conditionText(definition)}</td>
              <td data-label="Priority">
                <PriorityBadge priority={definition.priority ?? 'Medium'} />
              </td>
              <td data-label="Area">{definition.area ?? '—'}</td>
              <td data-label="Enabled">{definition.enabled === false ? 'No' : 'Yes'}</td>
              {manage ? (
                <td>
                  {confirming === definition.name ? (
                    <div class="actions">
                      <span>Delete {definition.name}? Its journal stays.</span>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => void remove(definition.name)}
                      >
                        Delete<span class="visually-hidden"> {definition.name} now</span>
                      </button>
                      <button type="button" onClick={() => setConfirming('')}>
                        Cancel
                      </button>
                    </div>
                  ) : (
                    <div class="actions">
                      <a
                        class="button"
                        href={href('alarms', 'definitions', 'edit', definition.name)}
                      >
                        Edit<span class="visually-hidden"> {definition.name}</span>
                      </a>
                      <button type="button" onClick={() => setConfirming(definition.name)}>
                        Delete<span class="visually-hidden"> {definition.name}</span>
                      </button>
                    </div>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
    </div>
  );
}

/** A definition's condition in a few words: `High of Demo/Line1/Temperature above 64`. */
function conditionText(definition: AlarmDefinition): string {
  const of = definition.source ? ` of ${definition.source}` : '';
  switch (definition.condition) {
    case 'High':
    case 'HighHigh':
      return `${definition.condition}${of} above ${definition.limit}`;
    case 'Low':
    case 'LowLow':
      return `${definition.condition}${of} below ${definition.limit}`;
    case 'Deviation':
      return `Deviation${of} from ${definition.setpoint} by more than ${definition.limit}`;
    case 'RateOfChange':
      return `Rate of change${of} over ${definition.limit} per second`;
    case 'Digital':
      return `Digital${of} equals ${alarmValueText(definition.value, undefined)}`;
    case 'BadQuality':
      return `Bad quality${of}`;
    case 'Expression':
      return `Expression ${definition.expression ?? ''}`;
    default:
      return definition.condition;
  }
}
