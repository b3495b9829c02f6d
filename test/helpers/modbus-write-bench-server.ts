/**
 * A minimal Modbus TCP server for bench/tag-write.bench.ts, run as a child process so its CPU
 * and event loop are not the client's: `node --import tsx test/helpers/modbus-write-bench-server.ts`.
 * It listens on a free loopback port and prints `{"port": …}` once listening. It holds 1,000
 * holding registers, answers FC 3 reads and FC 6 / FC 16 writes (storing them), and counts every
 * write it receives per address and value, so the bench can tell a lost write (a Good result
 * whose value never arrived) from a duplicated one (a value that arrived twice). A line `stats`
 * on stdin prints `{"received": N, "duplicates": D, "last": {address: value}, "distinct":
 * {address: count}}`, where a value is the uint32 of the two registers at an even address.
 */
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const registers = 1000;

function serve(): void {
  const table = Buffer.alloc(registers * 2);
  let received = 0;
  let duplicates = 0;
  /** Values seen per even address (uint32 of the pair). */
  const seen = new Map<number, Set<number>>();
  const last = new Map<number, number>();
  const record = (address: number) => {
    received++;
    const pair = address & ~1;
    const value = table.readUInt32BE(2 * pair);
    let values = seen.get(pair);
    if (values === undefined) {
      values = new Set();
      seen.set(pair, values);
    }
    if (values.has(value)) duplicates++;
    values.add(value);
    last.set(pair, value);
  };
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    let pending: Buffer = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 8) {
        const length = pending.readUInt16BE(4);
        if (pending.length < 6 + length) break;
        const fc = pending[7] as number;
        const address = pending.readUInt16BE(8);
        const quantity = pending.readUInt16BE(10);
        let body: Buffer;
        if (fc === 3 && address + quantity <= registers && quantity >= 1 && quantity <= 125) {
          body = Buffer.alloc(2 + 2 * quantity);
          body[0] = fc;
          body[1] = 2 * quantity;
          table.copy(body, 2, 2 * address, 2 * (address + quantity));
        } else if (fc === 6 && address < registers) {
          pending.copy(table, 2 * address, 10, 12);
          record(address);
          body = Buffer.from(pending.subarray(7, 12));
        } else if (fc === 16 && address + quantity <= registers) {
          pending.copy(table, 2 * address, 13, 13 + 2 * quantity);
          record(address);
          body = Buffer.from(pending.subarray(7, 12));
        } else body = Buffer.from([fc | 0x80, fc === 3 || fc === 6 || fc === 16 ? 2 : 1]);
        const answer = Buffer.alloc(7 + body.length);
        pending.copy(answer, 0, 0, 4);
        answer.writeUInt16BE(1 + body.length, 4);
        answer[6] = pending[6] as number;
        body.copy(answer, 7);
        socket.write(answer);
        pending = pending.subarray(6 + length);
      }
    });
  });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== 'stats') return;
    process.stdout.write(
      `${JSON.stringify({
        received,
        duplicates,
        last: Object.fromEntries(last),
        distinct: Object.fromEntries([...seen].map(([address, values]) => [address, values.size])),
      })}\n`,
    );
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(
      `${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`,
    );
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) serve();
