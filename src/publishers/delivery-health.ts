/**
 * The health tags every publisher has (spec §2.4): its status and how its last delivery went,
 * under `Publishers/<name>/`. The MQTT publisher adds its queue's and Sparkplug's.
 */
import type { TagDefinition } from '../tags/tag-store.js';

/** The ids of a publisher's delivery health tags. */
export interface DeliveryHealthTagIds {
  status: string;
  lastDeliverySuccess: string;
  lastDeliveryError: string;
}

/** The ids of the delivery health tags of publisher `name`. */
export function deliveryHealthTagIds(name: string): DeliveryHealthTagIds {
  return {
    status: `Publishers/${name}/Status`,
    lastDeliverySuccess: `Publishers/${name}/LastDeliverySuccess`,
    lastDeliveryError: `Publishers/${name}/LastDeliveryError`,
  };
}

/**
 * The definitions (descriptions) of the delivery health tags of a publisher.
 * @param kind names the kind of publisher in the status's description: `MQTT`, `webhook`
 */
export function deliveryHealthDefinitions(
  ids: DeliveryHealthTagIds,
  kind: string,
  name: string,
): TagDefinition[] {
  return [
    {
      fullTagId: ids.status,
      metadata: { description: `Status of ${kind} publisher ${name}: On, Off or Error` },
    },
    {
      fullTagId: ids.lastDeliverySuccess,
      metadata: { description: 'true when the most recent delivery succeeded' },
    },
    {
      fullTagId: ids.lastDeliveryError,
      metadata: { description: 'Empty when healthy, else why the last delivery failed' },
    },
  ];
}
