/**
 * The tag of a relayed metric: `<driver>/<group>/<node>/<device>/<metric path>` for a device
 * metric, `<driver>/<group>/<node>/<metric path>` for a metric of the edge node itself (its
 * NBIRTH and NDATA), the way Sparkplug tools show a node's metrics beside its devices. The
 * metric name's `/` separate segments. Characters a tag segment cannot hold (spaces, `#`, …)
 * become `_`, and an empty segment becomes `_`: `Node Control/Rebirth` is
 * `Node_Control/Rebirth`.
 */
import { maxPathLength, maxSegments } from '../../src/tags/tag-path.js';

/** One tag-path segment from one Sparkplug id or metric-name level. */
export function segmentOf(level: string): string {
  const segment = level.replace(/[^A-Za-z0-9_.:-]/g, '_');
  return segment === '' ? '_' : segment;
}

/**
 * The fullTagId of a metric, or undefined when it would exceed the store's limits (more than
 * 16 segments, more than 256 characters): such a metric is left out and counted.
 */
export function relayedTagId(
  driver: string,
  groupId: string,
  edgeNodeId: string,
  deviceId: string | undefined,
  metricName: string,
): string | undefined {
  const levels = [groupId, edgeNodeId, ...(deviceId !== undefined ? [deviceId] : [])];
  const segments = [driver, ...levels.map(segmentOf), ...metricName.split('/').map(segmentOf)];
  if (segments.length > maxSegments) return undefined;
  const id = segments.join('/');
  return id.length > maxPathLength ? undefined : id;
}
