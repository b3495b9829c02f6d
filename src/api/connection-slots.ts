/**
 * Who may hold a listener's connection slots. Node's own `maxConnections` counts every socket
 * alike, so one peer opening sockets that send half a request head (and reopening each one the
 * headers timeout closes) holds them all, and no one else gets in: not another machine, not a
 * local app. Two rules on top of the total, applied as each connection arrives:
 *
 * - a peer address off this machine holds at most `maxConnectionsPerAddress` connections;
 * - peers off this machine together hold at most `maxConnections` less an eighth of it
 *   ({@link loopbackReserve}), which is kept for loopback peers: the console and apps on the
 *   gateway itself, a local Prometheus, keep working while the plant network misbehaves.
 *
 * Loopback peers are held to the total only: every local app shares one address, 127.0.0.1,
 * and whoever runs code on the gateway has simpler ways to hurt it than holding sockets.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { isLoopbackAddress } from './loopback-peer.js';

/** The limits {@link guardConnectionSlots} applies. */
export interface ConnectionSlotLimits {
  /** Most connections open at once, from anyone. Default 256. */
  maxConnections?: number;
  /** Most connections one peer address off this machine holds at once. Default 32. */
  maxConnectionsPerAddress?: number;
  /**
   * Whether a peer (a socket's remote address) is on this machine. Default
   * {@link isLoopbackAddress}; tests name some 127.x addresses remote, to stand for plant peers.
   */
  isLoopbackPeer?: (remoteAddress: string) => boolean;
}

/** Slots of `maxConnections` that peers off this machine cannot take: an eighth, rounded down. */
export function loopbackReserve(maxConnections: number): number {
  return Math.floor(maxConnections / 8);
}

/**
 * Applies the limits to `server`: its total (node's `maxConnections`, whose refusals node
 * reports as `drop`), and the per-address and loopback rules of the module comment. A refused
 * connection is closed on arrival, before a byte is read; the first refusal of each kind after
 * a start is logged at warn, later ones at debug.
 */
export function guardConnectionSlots(
  server: Server,
  limits: ConnectionSlotLimits,
  logger: Logger,
): void {
  const maxConnections = limits.maxConnections ?? 256;
  const perAddress = limits.maxConnectionsPerAddress ?? 32;
  const remoteShare = maxConnections - loopbackReserve(maxConnections);
  const isLoopbackPeer = limits.isLoopbackPeer ?? isLoopbackAddress;
  server.maxConnections = maxConnections;

  const warned = new Set<string>();
  const refuse = (message: string, fields: Record<string, unknown>) => {
    if (warned.has(message)) {
      logger.debug(fields, message);
    } else {
      warned.add(message);
      logger.warn(fields, `${message} (further ones at debug)`);
    }
  };
  server.on('drop', (data) =>
    refuse('connection refused: too many open connections', {
      remoteAddress: data?.remoteAddress,
      maxConnections,
    }),
  );

  const byAddress = new Map<string, number>();
  let remote = 0;
  server.on('connection', (socket: Socket) => {
    const address = peerAddress(socket.remoteAddress);
    // Gone before it was handed over: nothing to count.
    if (address === undefined) {
      socket.destroy();
      return;
    }
    if (isLoopbackPeer(address)) return;
    const held = byAddress.get(address) ?? 0;
    if (held >= perAddress) {
      socket.destroy();
      refuse('connection refused: too many connections from one address', {
        remoteAddress: address,
        maxConnectionsPerAddress: perAddress,
      });
      return;
    }
    if (remote >= remoteShare) {
      socket.destroy();
      refuse('connection refused: the connections for peers off this machine are all taken', {
        remoteAddress: address,
        maxConnections,
        keptForLoopback: maxConnections - remoteShare,
      });
      return;
    }
    byAddress.set(address, held + 1);
    remote += 1;
    socket.once('close', () => {
      remote -= 1;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left > 0) byAddress.set(address, left);
      else byAddress.delete(address);
    });
  });
}

// An IPv4 peer seen through an IPv6 socket (`::ffff:10.0.0.5`) is the same peer as `10.0.0.5`.
function peerAddress(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && lower.includes('.') ? lower.slice('::ffff:'.length) : lower;
}
