/**
 * The driver types that need a licensed feature. The relay drivers — the Sparkplug B host
 * application (`sparkplug`) and the generic MQTT subscriber (`mqtt`) — receive other gateways'
 * data through a broker: that is the data relay, licensed as the publishers that send it are
 * (spec §1: server and enterprise editions). Declared here, by type name, so the daemon (which
 * does not start such a driver without the feature) and the Drivers API (which refuses to add
 * or replace one) read the same list without importing a driver; so does the Relay API, which
 * lists the drivers of the data relay ({@link relayDriverTypes}).
 */
import { type Feature, featureUnavailable, type LicenseState } from './license.js';

/** A driver type that needs a feature, and how messages name it. */
interface LicensedDriver {
  feature: Feature;
  /** The driver in words, for messages: "the Sparkplug host driver". */
  noun: string;
}

/** The driver types that need a licensed feature, by type. */
export const licensedDrivers: Readonly<Record<string, LicensedDriver>> = {
  sparkplug: { feature: 'dataRelay', noun: 'Sparkplug host driver (`sparkplug`)' },
  mqtt: { feature: 'dataRelay', noun: 'MQTT subscriber driver (`mqtt`)' },
};

/** The relay driver types, which the Relay API lists: those licensed as the data relay. */
export const relayDriverTypes: readonly string[] = Object.entries(licensedDrivers)
  .filter(([, licensed]) => licensed.feature === 'dataRelay')
  .map(([type]) => type);

/**
 * Why a driver of this type may not run under this license, or undefined when it may (its type
 * needs no feature, or the license grants it): "The MQTT subscriber driver (`mqtt`) needs the
 * data relay feature of the server or enterprise edition; this installation is not licensed."
 * @param type the driver's `type`, e.g. `mqtt`.
 */
export function driverLicenseBlocker(license: LicenseState, type: string): string | undefined {
  const licensed = Object.hasOwn(licensedDrivers, type) ? licensedDrivers[type] : undefined;
  if (licensed === undefined) return undefined;
  return featureUnavailable(license, licensed.feature, `The ${licensed.noun}`);
}
