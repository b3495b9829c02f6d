/**
 * A TCP relay on loopback between an OPC UA client and server, for tests that break the
 * connection without stopping the server: `cut()` drops every relayed connection (the client
 * sees the connection lost, the server keeps the session), new connections are relayed again.
 * `hang()` makes the server look hung: the connections stay open and new ones are accepted, but
 * nothing is relayed either way until `resume()` (what was sent meanwhile is lost).
 * `hold()` stops reading what the server sends (as a client too busy to read: TCP backpressure
 * reaches the server, which queues), delivered in order after `release()`; the other way
 * still flows. Protocol-neutral: also used between an MQTT client and Mosquitto.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running relay. */
export class TcpRelay {
  private hung = false;
  private held = false;
  /** The relay's connections to the server, one per relayed client. */
  private readonly outbounds = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly port: number,
  ) {}

  /** Relays 127.0.0.1:<free port> to `targetPort` on 127.0.0.1. */
  static async start(targetPort: number): Promise<TcpRelay> {
    const sockets = new Set<Socket>();
    let relay: TcpRelay | undefined;
    const server = createServer((inbound) => {
      const outbound = connect(targetPort, '127.0.0.1');
      relay?.outbounds.add(outbound);
      outbound.on('close', () => relay?.outbounds.delete(outbound));
      if (relay?.held) outbound.pause();
      for (const socket of [inbound, outbound]) {
        sockets.add(socket);
        socket.on('close', () => {
          sockets.delete(socket);
          inbound.destroy();
          outbound.destroy();
        });
        socket.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.on('data', (data) => {
        if (!relay?.hung) outbound.write(data);
      });
      outbound.on('data', (data) => {
        if (!relay?.hung) inbound.write(data);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    relay = new TcpRelay(server, sockets, port);
    return relay;
  }

  /** `opc.tcp://127.0.0.1:<relay port>`. */
  get endpointUrl(): string {
    return `opc.tcp://127.0.0.1:${this.port}`;
  }

  /** Drops every relayed connection at once. */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Stops relaying, both ways, on every connection (open or new); nothing is closed. */
  hang(): void {
    this.hung = true;
  }

  /** Relays again after {@link hang}. */
  resume(): void {
    this.hung = false;
  }

  /** Stops reading from the server on every connection (open or new); see the module comment. */
  hold(): void {
    this.held = true;
    for (const outbound of this.outbounds) outbound.pause();
  }

  /** Reads from the server again after {@link hold}: what it queued follows in order. */
  release(): void {
    this.held = false;
    for (const outbound of this.outbounds) outbound.resume();
  }

  /** Drops the connections and stops listening. */
  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
