import { api, encodePath } from './api-client';
import type { RelayNodeView } from './api-types';
import { FormError } from './form-error';
import { formatTime } from './format';
import { usePoll } from './use-poll';

/** A node's state in one word: Offline, Stale (silent too long) or Online, and catching up. */
function nodeState(node: RelayNodeView): { text: string; tone: string } {
  if (!node.online) return { text: 'Offline', tone: 'lost' };
  if (node.stale) return { text: 'Stale', tone: 'lost' };
  return { text: node.catchUp ? 'Online, catching up' : 'Online', tone: 'ok' };
}

/**
 * The edge nodes a Sparkplug host driver has seen, on its card of the Drivers page: state and
 * since when, devices online, tags, sequence errors and rebirth requests (docs/relay.md).
 */
export function RelayNodesTable({ driver }: { driver: string }) {
  const nodes = usePoll(
    () =>
      api<{ nodes: RelayNodeView[] }>(`/api/v2/Relay/${encodePath(driver)}/Nodes`).then(
        (answer) => answer.nodes,
      ),
    2_000,
    driver,
  );
  if (nodes.error) {
    return <FormError>{nodes.error}</FormError>;
  }
  if (!nodes.data) return <p role="status">Loading edge nodes…</p>;
  if (nodes.data.length === 0) return <p class="muted">No edge node seen yet.</p>;
  return (
    // Wider than a card: the scrolling region takes the keyboard focus, so it can be scrolled
    // (axe's scrollable-region-focusable).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable
    <section class="table-wrap" tabIndex={0} aria-label={`Edge nodes of ${driver}, scrollable`}>
      <table aria-label={`Edge nodes of ${driver}`}>
        <thead>
          <tr>
            <th scope="col">Edge node</th>
            <th scope="col">State</th>
            <th scope="col">Devices</th>
            <th scope="col">Tags</th>
            <th scope="col">Seq errors</th>
            <th scope="col">Rebirths</th>
          </tr>
        </thead>
        <tbody>
          {nodes.data.map((node) => {
            const state = nodeState(node);
            const online = node.devices.filter((device) => device.online).length;
            return (
              <tr key={`${node.groupId}/${node.edgeNodeId}`}>
                <td class="tag-path">
                  {node.groupId}/{node.edgeNodeId}
                </td>
                <td>
                  <span class={`status status-${state.tone}`}>{state.text}</span>
                  <span class="muted"> since {formatTime(node.since)}</span>
                </td>
                <td>
                  {online}/{node.devices.length}
                </td>
                <td>{node.tagCount.toLocaleString()}</td>
                <td>{node.sequenceErrors.toLocaleString()}</td>
                <td>{node.rebirthsRequested.toLocaleString()}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
