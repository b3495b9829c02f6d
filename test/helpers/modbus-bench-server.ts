/**
 * A minimal Modbus TCP server for bench/modbus.bench.ts, run as a child process so its CPU is
 * not counted with the client's: `node --import tsx test/helpers/modbus-bench-server.ts COUNT`.
 * It listens on a free loopback port, prints `{"port": …}` on stdout once listening, and
 * answers FC 3 and FC 4 from a table of COUNT registers holding their own address, "illegal
 * data address" past it. It does as little as possible per request, so that a server on the
 * same two cores is not what limits the polling rate.
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

function serve(count: number): void {
  const table = Buffer.alloc(count * 2);
  for (let i = 0; i < count; i++) table.writeUInt16BE(i & 0xffff, 2 * i);
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 12) {
        const length = pending.readUInt16BE(4);
        if (pending.length < 6 + length) break;
        const unit = pending[6] as number;
        const fc = pending[7] as number;
        const address = pending.readUInt16BE(8);
        const quantity = pending.readUInt16BE(10);
        let answer: Buffer;
        const ok =
          (fc === 3 || fc === 4) && quantity >= 1 && quantity <= 125 && address + quantity <= count;
        if (ok) {
          answer = Buffer.allocUnsafe(9 + 2 * quantity);
          answer.writeUInt16BE(3 + 2 * quantity, 4);
          answer[8] = 2 * quantity;
          table.copy(answer, 9, 2 * address, 2 * (address + quantity));
        } else {
          answer = Buffer.allocUnsafe(9);
          answer.writeUInt16BE(3, 4);
          answer[8] = fc === 3 || fc === 4 ? 2 : 1;
        }
        pending.copy(answer, 0, 0, 4); // transaction and protocol ids
        answer[6] = unit;
        answer[7] = ok ? fc : fc | 0x80;
        socket.write(answer);
        pending = pending.subarray(6 + length);
      }
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve(Number(process.argv[2] ?? 10_000));
