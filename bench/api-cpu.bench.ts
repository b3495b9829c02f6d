/**
 * Authenticated `GET /api/v2/Tags/Sample/{path}`, as server CPU per request (issue 15): the
 * same two servers as bench/api.bench.ts (the bare node:http server and the real API), each in
 * a child process of its own, loaded in turn by autocannon from this process
 * (bench/server-cpu.ts). Rates are requests per server CPU second, and the ratio is the
 * throughput ratio the servers reach when the CPU is what limits them.
 *
 * On a shared machine the throughput ratio of api.bench.ts swings with whatever else runs
 * (the load tool, the two servers and other processes share the cores); CPU per request moves
 * far less, so this case is the steadier reading of the same budget. Linux only (/proc).
 */
import type { MeasuredCase } from './harness.js';
import { serverCpuCase } from './server-cpu.js';

export const cases: MeasuredCase[] = [
  serverCpuCase({
    name: 'api: GET Tags/Sample, server CPU per request',
    figure: 'rate',
    baseline: { kind: 'bare', name: 'bare node:http server, own process' },
    subject: { kind: 'api', name: 'tagd API, own process' },
    budget: {
      minRatio: 0.7,
      description: 'issue 15: ≥ 0.7 × bare node:http, per server CPU second',
    },
  }),
];
