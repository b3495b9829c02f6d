import type { AlarmPriority } from './api-types';

/** An alarm's priority: its word on its colour (styles.css `.priority-*`). */
export function PriorityBadge({ priority }: { priority: AlarmPriority }) {
  return <span class={`priority priority-${priority.toLowerCase()}`}>{priority}</span>;
}
