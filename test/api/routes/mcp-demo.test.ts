/**
 * The MCP server of a whole daemon running the demo profile: on by default on its loopback
 * listener, tools served with the daemon's own services, and a proposal written to the
 * simulator's writable setpoint only once a person confirms it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import test from 'ava';
import { adminToken, demoDaemon } from '../../helpers/demo-daemon.js';

type ToolResult = { isError?: boolean; content: { text: string }[] };

test('the demo daemon serves MCP on loopback; its setpoint changes only when a person confirms', async (t) => {
  const demo = await demoDaemon(t);
  const token = await adminToken(demo.url, demo.stateDir);
  const client = new Client({ name: 'tagd-demo-test', version: '1.0.0' });
  t.teardown(() => client.close());
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${demo.url}/api/v2/Mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  t.true(names.includes('proposeWrite'));
  t.true(names.includes('listAlarms'), 'the demo has alarms');
  const read = async () => {
    const result = (await client.callTool({
      name: 'readSamples',
      arguments: { fullTagIds: ['Demo/Controls/Setpoint'] },
    })) as ToolResult;
    return (JSON.parse(result.content[0]?.text ?? '{}') as { samples: { value?: unknown }[] })
      .samples[0]?.value;
  };
  const before = await read();
  t.not(before, 42);
  const proposed = (await client.callTool({
    name: 'proposeWrite',
    arguments: { fullTagId: 'Demo/Controls/Setpoint', value: 42, reason: 'demo' },
  })) as ToolResult;
  t.falsy(proposed.isError, proposed.content[0]?.text);
  const { id } = (JSON.parse(proposed.content[0]?.text ?? '{}') as { proposal: { id: string } })
    .proposal;
  t.is(await read(), before, 'nothing written yet');
  const outside = (await client.callTool({
    name: 'proposeWrite',
    arguments: { fullTagId: 'Demo/Controls/ConveyorOn', value: true, reason: 'demo' },
  })) as ToolResult;
  t.true(outside.isError, 'only the setpoint is in the demo’s writableTags');

  const confirmed = await fetch(`${demo.url}/api/v2/Assistant/Proposals/${id}/Confirm`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  });
  t.is(confirmed.status, 200);
  t.like(await confirmed.json(), { status: 'Confirmed', outcome: { status: 'Good' } });
  t.is(await read(), 42);

  // Every call is audited: the first read a line at once, the repeated ones in a summary that
  // the daemon's stop writes (its manual clock never closed the window).
  await client.close();
  await demo.daemon.stop();
  const reads = demo.logs.lines.filter(
    (line) => line.event === 'assistant-tool' && line.tool === 'readSamples',
  );
  t.is(reads.length, 2);
  t.like(reads[1], { calls: 2, via: 'mcp', account: 'admin' });
});
