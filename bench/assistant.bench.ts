/**
 * The assistant's budgets (issue 24):
 *
 * - `assistant: MCP tools/call readSamples p50`: the round trip of an MCP `tools/call` of
 *   readSamples (one tag) by the real SDK client over loopback HTTP to the real API (token
 *   check per request, the session's transport and server, the registry's checks, audit line,
 *   bounds): median < 5 ms. Baseline: the round trip of `GET /api/v2/Tags/Sample` from the same
 *   process, for scale.
 * - `assistant: tool handler CPU per request over Tags/Sample`: the same request (`GET
 *   /api/v2/Tags/Sample/{path}`, autocannon's load) answered by the REST route's handler
 *   (baseline) and by a copy of the route whose handler calls the registry's readSamples tool
 *   as one MCP session calling in a loop (subject: permission and token checks, input
 *   validation, the in-flight count, the audit, output bounding), each server in a child process
 *   of its own (bench/server-cpu.ts): the subject's server CPU per request at most 1.1 × the
 *   baseline's, i.e. the tool handler costs less than 10 % over the route. The session's
 *   repeated reads are audited as the daemon audits them: the first at once, the rest in a
 *   summary line a second (src/assistant/tool-call-audit.ts).
 * - `assistant: tool handler CPU per request, an audit line each call` (no budget): each call
 *   from a session of its own, so each writes its own line: what a call costs that cannot be
 *   summarized (a first call, a refusal, a proposal).
 * - `assistant: tool handler CPU per request, audit line not written` (no budget): the audit
 *   logger's level above the lines': the registry's own checks and bounds.
 *
 * The audit log of the servers is a real pino logger at info level writing to /dev/null
 * (bench/api-servers.ts), so the audit line each tool call writes is paid for as in the daemon.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { apiServer, fullTagId } from './api-servers.js';
import { type CaseResult, caseResult, type MeasuredCase, median, sideResult } from './harness.js';
import { type ServerCpuCase, type ServerCpuSide, samplePath, serverCpuCase } from './server-cpu.js';

/** The value of the sample the servers hold (bench/api-servers.ts). */
const sampleValue = 61.23456789;

/** Round trips per timed sample, and samples, of the latency case. */
const roundTrips = 400;
const latencySamples = 7;

function latencyCase(): MeasuredCase {
  return {
    kind: 'measured',
    name: 'assistant: MCP tools/call readSamples p50',
    unit: 'ms',
    quantity: 'amount',
    budget: { maxAmount: 5, description: 'issue 24: MCP tools/call of a sample read p50 < 5 ms' },
    async measure(): Promise<CaseResult> {
      const token = { value: '' };
      const api = apiServer(token);
      const url = await api.start();
      const headers = { Authorization: `Bearer ${token.value}` };
      const client = new Client({ name: 'tagd-bench', version: '1.0.0' });
      try {
        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${url}/api/v2/Mcp`), {
            requestInit: { headers },
          }),
        );
        const mcpCall = async () => {
          const result = (await client.callTool({
            name: 'readSamples',
            arguments: { fullTagIds: [fullTagId] },
          })) as { isError?: boolean; content: { text: string }[] };
          if (result.isError || !result.content[0]?.text.includes(String(sampleValue))) {
            throw new Error(`unexpected answer: ${JSON.stringify(result)}`);
          }
        };
        const restCall = async () => {
          const response = await fetch(`${url}${samplePath}`, { headers });
          if (response.status !== 200) throw new Error(`REST answered ${response.status}`);
          await response.text();
        };
        // Median round trip of each sample of `roundTrips` calls, in ms.
        const medianOf = async (call: () => Promise<void>) => {
          const times: number[] = [];
          for (let i = 0; i < roundTrips; i++) {
            const began = performance.now();
            await call();
            times.push(performance.now() - began);
          }
          return median(times);
        };
        // Warm-up of both sides, then samples taken alternately.
        await medianOf(mcpCall);
        await medianOf(restCall);
        const mcp: number[] = [];
        const rest: number[] = [];
        for (let sample = 0; sample < latencySamples; sample++) {
          rest.push(await medianOf(restCall));
          mcp.push(await medianOf(mcpCall));
        }
        return caseResult(
          this,
          sideResult('REST GET Tags/Sample round trip p50', roundTrips, rest),
          sideResult('MCP tools/call readSamples round trip p50 (SDK client)', roundTrips, mcp),
        );
      } finally {
        await client.close();
        await api.stop();
      }
    },
  };
}

/**
 * A tool-handler CPU row: `subject` answers Tags/Sample through the registry's readSamples tool,
 * against the REST route's handler.
 */
function overheadCase(
  name: string,
  subject: ServerCpuSide,
  budget?: ServerCpuCase['budget'],
): MeasuredCase {
  return serverCpuCase({
    name,
    figure: 'cpu',
    baseline: { kind: 'api', name: 'Tags/Sample answered by its REST handler, own process' },
    subject,
    ...(budget ? { budget } : {}),
    async verify(baseline, subject) {
      const [rest, tool] = await Promise.all(
        [baseline, subject].map(({ url, headers }) => fetch(`${url}${samplePath}`, { headers })),
      );
      if (rest?.status !== 200 || tool?.status !== 200) {
        throw new Error(`status ${rest?.status} / ${tool?.status}`);
      }
      const restBody = (await rest.json()) as { value: unknown };
      const toolBody = (await tool.json()) as { samples: { value: unknown }[] };
      if (restBody.value !== sampleValue) throw new Error('the route answered no sample');
      if (toolBody.samples[0]?.value !== sampleValue)
        throw new Error('the tool answered no sample');
    },
  });
}

/** The cases of this file. Servers start only when a case runs. */
export const cases: MeasuredCase[] = [
  latencyCase(),
  overheadCase(
    'assistant: tool handler CPU per request over Tags/Sample',
    {
      kind: 'api-tool',
      name: 'Tags/Sample answered by the readSamples tool handler (checks, audit, bounds) for one MCP session, own process',
    },
    {
      maxRatio: 1.1,
      description: 'issue 24: tool handler overhead < 10 % over the same REST route',
    },
  ),
  // No budgets: what a call costs that writes a line of its own, and what the registry's checks
  // and bounds cost without any audit line, so a report shows where the overhead lies.
  overheadCase('assistant: tool handler CPU per request, an audit line each call', {
    kind: 'api-tool-line-each',
    name: 'Tags/Sample answered by the readSamples tool handler, a session and an audit line each call, own process',
  }),
  overheadCase('assistant: tool handler CPU per request, audit line not written', {
    kind: 'api-tool-unaudited',
    name: 'Tags/Sample answered by the readSamples tool handler (checks, bounds; audit below the level), own process',
  }),
];
