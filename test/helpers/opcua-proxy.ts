/**
 * A TCP relay on loopback between an OPC UA client and server, for tests that break the
 * connection without stopping the server: `cut()` drops every relayed connection (the client
 * sees the connection lost, the server keeps the session), new connections are relayed again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A running relay. */
export class TcpRelay {
  private constructor(
    private readonly server: Server,
    private readonly sockets: Set<Socket>,
    readonly port: number,
  ) {}

  /** Relays 127.0.0.1:<free port> to `targetPort` on 127.0.0.1. */
  static async start(targetPort: number): Promise<TcpRelay> {
    const sockets = new Set<Socket>();
    const server = createServer((inbound) => {
      const outbound = connect(targetPort, '127.0.0.1');
      for (const socket of [inbound, outbound]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          inbound.destroy();
          outbound.destroy();
        });
      }
      inbound.pipe(outbound);
      outbound.pipe(inbound);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    return new TcpRelay(server, sockets, port);
  }

  /** `opc.tcp://127.0.0.1:<relay port>`. */
  get endpointUrl(): string {
    return `opc.tcp://127.0.0.1:${this.port}`;
  }

  /** Drops every relayed connection at once. */
  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  /** Drops the connections and stops listening. */
  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
