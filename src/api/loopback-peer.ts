/**
 * Whether a connection's peer is on this machine's loopback (127.0.0.0/8, ::1, or 127.x seen
 * through an IPv4-mapped IPv6 socket). The rule is about who connected, not which listener took
 * the connection: an HTTPS listener bound to a plant address also sees loopback peers (a local
 * Prometheus) and remote ones.
 */
import { isIPv4 } from 'node:net';

/** True when `address` (a socket's `remoteAddress`) is a loopback address. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === '::1') return true;
  const lower = address.toLowerCase();
  const v4 = lower.startsWith('::ffff:') ? lower.slice('::ffff:'.length) : lower;
  return isIPv4(v4) && v4.startsWith('127.');
}
