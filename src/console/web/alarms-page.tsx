import { AlarmDefinitions } from './alarm-definitions';
import { AlarmDetail } from './alarm-detail';
import { AlarmJournalView } from './alarm-journal';
import { AlarmList } from './alarm-list';
import { AlarmStatisticsReport } from './alarm-statistics';
import { href, route } from './router';

/** The views of the Alarms page, in its own navigation. */
const views = [
  { id: '', title: 'Active' },
  { id: 'journal', title: 'Journal' },
  { id: 'statistics', title: 'Statistics' },
  { id: 'definitions', title: 'Definitions' },
] as const;

/**
 * Alarms: the active list with the operator actions (`#/alarms`), one alarm
 * (`#/alarms/alarm/<name>`), the journal (`#/alarms/journal`), the statistics
 * (`#/alarms/statistics`) and the definitions with their editor (`#/alarms/definitions`).
 */
export function AlarmsPage() {
  const [, view = '', name] = route.value.segments;
  const current = view === 'alarm' ? '' : view;
  return (
    <section class="panel alarms-page" aria-labelledby="alarms-title">
      <h1 id="alarms-title">Alarms</h1>
      <nav class="subnav" aria-label="Alarm views">
        <ul class="subnav-list">
          {views.map((entry) => (
            <li key={entry.id}>
              <a
                class="subnav-link"
                href={entry.id ? href('alarms', entry.id) : href('alarms')}
                aria-current={entry.id === current ? 'page' : undefined}
              >
                {entry.title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {view === 'journal' ? (
        <AlarmJournalView />
      ) : view === 'statistics' ? (
        <AlarmStatisticsReport />
      ) : view === 'definitions' ? (
        <AlarmDefinitions />
      ) : view === 'alarm' && name ? (
        <AlarmDetail key={name} name={name} />
      ) : (
        <AlarmList />
      )}
    </section>
  );
}
