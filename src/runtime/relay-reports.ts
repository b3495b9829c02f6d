/**
 * What `GET /api/v2/Relay` and `GET /api/v2/Relay/{driver}/Nodes` answer: the running relay
 * drivers (types `sparkplug` and `mqtt`) with their state from the driver reports, and, for a
 * Sparkplug host, the edge nodes it has seen (relay-report.ts). Beside the running drivers, so
 * the API reads it without importing a driver.
 */
import type { Driver } from '../../drivers/driver.js';
import { relayDriverTypes } from '../license/licensed-drivers.js';
import type { DriverReports } from './driver-reports.js';
import { isRelaySource, type RelayDriverSummary, type RelayNodeReport } from './relay-report.js';

/** The relay drivers' reports. */
export class RelayReports {
  constructor(
    private readonly options: {
      /** The running drivers (and those that failed), in profile order. */
      drivers: () => readonly Driver[];
      reports: DriverReports;
    },
  ) {}

  /** Every relay driver, in profile order. */
  list(): RelayDriverSummary[] {
    const summaries: RelayDriverSummary[] = [];
    for (const driver of this.options.drivers()) {
      if (!relayDriverTypes.includes(driver.type)) continue;
      const report = this.options.reports.get(driver.name);
      if (report === undefined) continue;
      const summary: RelayDriverSummary = {
        name: report.name,
        type: report.type,
        state: report.state,
        since: report.since,
        ...(report.message !== undefined ? { message: report.message } : {}),
        tagCount: report.tagCount,
      };
      if (isRelaySource(driver)) {
        const nodes = driver.relayNodes();
        summary.nodes = {
          total: nodes.length,
          online: nodes.filter((node) => node.online).length,
          stale: nodes.filter((node) => node.stale).length,
          catchingUp: nodes.filter((node) => node.catchUp).length,
        };
        summary.sequenceErrors = nodes.reduce((sum, node) => sum + node.sequenceErrors, 0);
        summary.rebirthsRequested = nodes.reduce((sum, node) => sum + node.rebirthsRequested, 0);
      }
      summaries.push(summary);
    }
    return summaries;
  }

  /**
   * The edge nodes a relay driver has seen (none for a driver that has no nodes, such as the
   * generic MQTT subscriber); undefined when no relay driver has that name.
   */
  nodes(name: string): RelayNodeReport[] | undefined {
    const driver = this.options.drivers().find((candidate) => candidate.name === name);
    if (driver === undefined || !relayDriverTypes.includes(driver.type)) return undefined;
    return isRelaySource(driver) ? driver.relayNodes() : [];
  }
}
