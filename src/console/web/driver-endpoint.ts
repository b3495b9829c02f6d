/** Where a driver reads from, in a line for its card, from its profile entry. Pure. */

/**
 * The endpoint of a driver entry: `tcp://10.0.0.5:502 (unit 1)`, `/dev/ttyUSB0 at 19200 baud`,
 * an OPC UA endpoint URL, a CAN interface, "simulated", "computed from other tags".
 */
export function driverEndpoint(entry: Record<string, unknown>): string {
  const transport = (entry.transport ?? {}) as Record<string, unknown>;
  switch (entry.type) {
    case 'modbus': {
      const unit = entry.unitId === undefined ? '' : ` (unit ${String(entry.unitId)})`;
      if (transport.kind === 'rtu') {
        return `${String(transport.path)} at ${String(transport.baudRate ?? 9600)} baud, ${String(transport.parity ?? 'none')} parity${unit}`;
      }
      return `tcp://${String(transport.host)}:${String(transport.port ?? 502)}${unit}`;
    }
    case 'opcua':
      return String(entry.endpointUrl);
    case 'can':
      if (transport.kind === 'socketcan') return `SocketCAN ${String(transport.interface)}`;
      if (transport.kind === 'slcan') {
        return `SLCAN ${String(transport.port)} at ${String(transport.bitrate)} bit/s`;
      }
      return `replay of ${String(transport.file)}`;
    case 'simulator':
      return 'simulated values';
    case 'derived':
      return 'computed from other tags';
    default:
      return '';
  }
}
