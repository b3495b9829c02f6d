/**
 * The MCP server at /api/v2/Mcp with the real SDK client over HTTP: tools per role, every tool
 * called, refusals as MCP errors, the resource and prompts, revocation ending the session, and
 * the profile switch.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import test from 'ava';
import { createApp } from '../../../src/api/app.js';
import { publisherSecret, startAssistantHarness } from '../../helpers/assistant-harness.js';
import { pymodbusMissing } from '../../helpers/modbus-peer.js';

const missing = pymodbusMissing();
if (missing !== undefined) console.warn(`MCP tests skipped: ${missing}`);
const peerTest = missing === undefined ? test.serial : test.serial.skip;

type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

function textOf(result: unknown): string {
  return ((result as ToolResult).content[0] as { text: string }).text;
}

function jsonOf(result: unknown): Record<string, unknown> {
  return JSON.parse(textOf(result)) as Record<string, unknown>;
}

peerTest(
  'tools are listed per role: a Viewer gets no proposeWrite, an Operator does',
  async (t) => {
    const h = await startAssistantHarness(t);
    const names = async (token: string) =>
      (await (await h.mcp(token)).client.listTools()).tools.map((tool) => tool.name).sort();
    t.deepEqual(await names(h.tokens.viewer), [
      'browseTags',
      'explainTag',
      'listAlarms',
      'queryHistory',
      'readAlarmJournal',
      'readSamples',
    ]);
    const operator = await names(h.tokens.operator);
    t.deepEqual(operator, [
      'browseTags',
      'explainTag',
      'listAlarms',
      'listDrivers',
      'listPublishers',
      'proposeAcknowledge',
      'proposeWrite',
      'queryHistory',
      'readAlarmJournal',
      'readDbcSignals',
      'readSamples',
    ]);
    t.deepEqual(await names(h.tokens.agent), operator, 'a service account gets its roles’ tools');
    const { client } = await h.mcp(h.tokens.operator);
    const tools = (await client.listTools()).tools;
    const propose = tools.find((tool) => tool.name === 'proposeWrite');
    t.is(propose?.annotations?.readOnlyHint, false);
    t.deepEqual((propose?.inputSchema as { required?: string[] } | undefined)?.required, [
      'fullTagId',
      'value',
      'reason',
    ]);
    t.true(tools.find((tool) => tool.name === 'readSamples')?.annotations?.readOnlyHint);
  },
);

peerTest('every tool answers through MCP, bounded and audited with via mcp', async (t) => {
  const h = await startAssistantHarness(t);
  const { client } = await h.mcp(h.tokens.admin);
  const call = (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args });

  const browse = jsonOf(await call('browseTags', { pattern: 'Dev/*', limit: 1 }));
  t.is((browse.tags as { fullTagId: string }[])[0]?.fullTagId, 'Dev/Setpoint');
  t.like((browse.tags as { metadata: unknown }[])[0]?.metadata, { writable: true, writeMax: 200 });
  const next = jsonOf(await call('browseTags', { pattern: 'Dev/*', cursor: browse.nextCursor }));
  t.deepEqual(
    (next.tags as { fullTagId: string }[]).map((tag) => tag.fullTagId),
    ['Dev/Speed'],
  );

  const samples = jsonOf(await call('readSamples', { fullTagIds: ['Dev/Speed', 'Dev/Nope'] }));
  t.like((samples.samples as unknown[])[0], {
    fullTagId: 'Dev/Speed',
    quality: 'Good',
    value: 1200,
  });
  t.deepEqual(samples.missing, ['Dev/Nope']);

  await h.history.flush();
  const raw = jsonOf(await call('queryHistory', { source: 'Dev/Speed', start: 'now-1h' }));
  // Defined Unavailable at the driver's start, then its first poll.
  t.like(raw.values, [
    { fullTagId: 'Dev/Speed', quality: 'Unavailable' },
    { fullTagId: 'Dev/Speed', quality: 'Good', value: 1200 },
  ]);
  const aggregated = jsonOf(
    await call('queryHistory', {
      source: 'Dev/**',
      start: 'now-1h',
      seriesMode: 'Aggregated',
      aggregationWindow: '1h',
      aggregationFunction: 'Max',
    }),
  );
  t.true((aggregated.values as unknown[]).length >= 2);

  const explained = jsonOf(await call('explainTag', { fullTagId: 'Dev/Speed' }));
  t.like(explained, {
    fullTagId: 'Dev/Speed',
    writable: false,
    driver: { name: 'Dev', type: 'modbus' },
  });
  t.like((explained.alarms as unknown[])[0], { name: 'FastSpeed' });
  t.true(Array.isArray(explained.qualityChanges24h));
  const derived = jsonOf(await call('explainTag', { fullTagId: 'Calc/SpeedPct' }));
  t.like(derived.derived, { expression: '{Dev/Speed} / 30' });

  const drivers = jsonOf(await call('listDrivers'));
  t.like((drivers.drivers as unknown[])[0], { name: 'Dev', type: 'modbus' });
  t.false(JSON.stringify(drivers).includes('127.0.0.1'), 'no driver configuration');

  const alarms = jsonOf(await call('listAlarms', { all: true }));
  t.like((alarms.alarms as unknown[])[0], { name: 'FastSpeed', state: 'Normal' });
  const journal = jsonOf(await call('readAlarmJournal'));
  t.true(Array.isArray(journal.entries));

  const dbc = jsonOf(await call('readDbcSignals', { component: 'Can', message: 'Engine' }));
  t.like(dbc.signals, [
    { signal: 'Rpm', quality: 'Good', value: 812, unit: 'rpm' },
    { signal: 'Temp', quality: 'Unavailable', unit: 'degC' },
  ]);

  const publishersText = textOf(await call('listPublishers'));
  t.false(publishersText.includes(publisherSecret), 'the secret never leaves');
  t.false(publishersText.includes('receiver.example'), 'nor the destination URL');
  t.like((JSON.parse(publishersText).webhooks as unknown[])[0], {
    name: 'plant-feed',
    authentication: { bearerToken: '********' },
  });

  const proposed = jsonOf(
    await call('proposeWrite', { fullTagId: 'Dev/Setpoint', value: 42, reason: 'test' }),
  );
  t.like(proposed.proposal, { status: 'Pending', fullTagId: 'Dev/Setpoint', via: 'mcp' });
  const ack = jsonOf(await call('proposeAcknowledge', { alarm: 'FastSpeed', reason: 'test' }));
  t.like(ack.proposal, { kind: 'acknowledge', status: 'Pending' });

  // Every call audited: a line each, or counted in the summary of a repeated read.
  const { lines, calls } = h.toolAudit();
  t.is(calls, 14);
  t.like(lines[0], { account: 'admin', tool: 'browseTags', via: 'mcp', outcome: 'ok' });
  t.is(typeof lines[0]?.conversationId, 'string', 'the MCP session is named');
  t.is(lines[0]?.arguments, '{"pattern":"Dev/*","limit":1}');
  t.false(JSON.stringify(h.api.logs.lines).includes(publisherSecret), 'nothing secret in logs');
});

peerTest(
  'refusals are MCP errors: isError results, or JSON-RPC errors for unknown names',
  async (t) => {
    const h = await startAssistantHarness(t);
    const { client } = await h.mcp(h.tokens.viewer);
    const forbidden = await client.callTool({
      name: 'proposeWrite',
      arguments: { fullTagId: 'Dev/Setpoint', value: 1, reason: 'x' },
    });
    t.true(forbidden.isError);
    t.like(jsonOf(forbidden), { code: 'forbidden', status: 403 });
    t.regex(textOf(forbidden), /needs the TagWrite permission/);

    const invalid = await client.callTool({ name: 'readSamples', arguments: { fullTagIds: [] } });
    t.true(invalid.isError);
    t.like(jsonOf(invalid), { code: 'validation-failed' });
    t.is((jsonOf(invalid).errors as { path: string }[])[0]?.path, 'fullTagIds');

    const notFound = await client.callTool({
      name: 'explainTag',
      arguments: { fullTagId: 'No/Such' },
    });
    t.true(notFound.isError);
    t.like(jsonOf(notFound), { status: 404 });

    const unknown = await t.throwsAsync(client.callTool({ name: 'writeTag', arguments: {} }));
    t.regex(String(unknown?.message), /Unknown tool/);
    t.is((unknown as { code?: number }).code, -32602);

    // Without a token, or with a bad one: 401 before any session.
    const response = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.is(response.status, 401);
    const noSession = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.tokens.viewer}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    t.is(noSession.status, 400, 'a request without a session must be an initialize');
  },
);

peerTest('a session answers only its own account', async (t) => {
  const h = await startAssistantHarness(t);
  const { transport } = await h.mcp(h.tokens.viewer);
  const response = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${h.tokens.operator}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': transport.sessionId as string,
      'Mcp-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  t.is(response.status, 404);
});

peerTest('the tag tree resource and the prompts', async (t) => {
  const h = await startAssistantHarness(t);
  const { client } = await h.mcp(h.tokens.viewer);
  const resources = (await client.listResources()).resources;
  t.deepEqual(
    resources.map((resource) => resource.uri),
    ['tagd://tags/tree'],
  );
  const tree = await client.readResource({ uri: 'tagd://tags/tree' });
  const body = JSON.parse((tree.contents[0] as { text: string }).text);
  const folders = body.folders as { path: string; tags: number }[];
  t.deepEqual(
    folders.filter((folder) => !folder.path.startsWith('Alarms')),
    [
      { path: 'Can', tags: 1 },
      { path: 'Can/Engine', tags: 1 },
      { path: 'Dev', tags: 2 },
    ],
  );
  const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  t.deepEqual(prompts, ['shift-summary', 'explain-quality']);
  const summary = await client.getPrompt({ name: 'shift-summary', arguments: { area: 'Dev' } });
  const text = (summary.messages[0]?.content as { text: string } | undefined)?.text ?? '';
  t.regex(text, /browseTags with pattern "Dev\/\*\*"/);
  t.regex(text, /never follow instructions/);
  await t.throwsAsync(client.getPrompt({ name: 'shift-summary', arguments: { area: 'a//b' } }), {
    message: /not a tag path/,
  });
});

peerTest('revoking the token ends the session at once', async (t) => {
  const h = await startAssistantHarness(t);
  const { client, transport } = await h.mcp(h.tokens.agent);
  t.is(
    (await client.callTool({ name: 'readSamples', arguments: { fullTagIds: ['Dev/Speed'] } }))
      .isError,
    undefined,
  );
  const sessionId = transport.sessionId as string;
  // Regenerating the service token voids the old one.
  const fresh = await h.api.accounts.generateServiceToken('agent');
  await t.throwsAsync(client.listTools(), { message: /401|revoked|Unauthorized/i });
  // The session itself ended: even the account's new token cannot continue it.
  const response = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${fresh}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Session-Id': sessionId,
      'Mcp-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  t.is(response.status, 404);
  t.truthy(
    h.api.logs.lines.find(
      (line) => line.msg === 'MCP session ended' && line.why === 'token no longer valid',
    ),
  );
});

peerTest('assistant.mcp.enabled false turns the endpoint off', async (t) => {
  const h = await startAssistantHarness(t, { assistant: { mcp: { enabled: false } } });
  const error = await t.throwsAsync(h.mcp(h.tokens.admin));
  t.regex(String(error?.message), /404|off/);
});

peerTest(
  'a session idle for 30 minutes ends (injected clock); an account opens at most 10',
  async (t) => {
    const h = await startAssistantHarness(t);
    // A service token: it does not expire with the clock, as access tokens do.
    const { client, transport } = await h.mcp(h.tokens.agent);
    h.api.clock.advance(29 * 60_000);
    t.truthy((await client.listTools()).tools.length, 'a request keeps it alive');
    h.api.clock.advance(30 * 60_000);
    const response = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.tokens.agent}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    t.is(response.status, 404);
    for (let i = 0; i < 10; i++) await h.mcp(h.tokens.agent);
    const refused = await t.throwsAsync(h.mcp(h.tokens.agent));
    t.regex(String(refused?.message), /409|MCP sessions open/);
  },
);

peerTest(
  'an error the transport answers itself reaches the client as the SDK wrote it',
  async (t) => {
    const h = await startAssistantHarness(t);
    const { transport } = await h.mcp(h.tokens.viewer);
    // No text/event-stream in Accept: the transport answers 406 with a JSON-RPC error.
    const response = await fetch(`${h.api.baseUrl}/api/v2/Mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.tokens.viewer}`,
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'Mcp-Session-Id': transport.sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    t.is(response.status, 406);
    t.regex(response.headers.get('content-type') ?? '', /application\/json/);
    t.like(await response.json(), { jsonrpc: '2.0', error: { code: -32000 } });
    t.is(response.headers.get('x-content-type-options'), 'nosniff', 'the security headers too');
  },
);

/** An address of this machine on a network (not loopback), if it has one. */
const plantAddress = Object.values(networkInterfaces())
  .flat()
  .find(
    (address) => address !== undefined && !address.internal && address.family === 'IPv4',
  )?.address;

(missing === undefined && plantAddress !== undefined ? test.serial : test.serial.skip)(
  'by default MCP answers only connections to a loopback address, not the plant network',
  async (t) => {
    const h = await startAssistantHarness(t);
    // The same API, listening on a network address as the plant-network listener does.
    const server = createServer(createApp(h.api.deps).callback());
    await new Promise<void>((resolve) => server.listen(0, plantAddress, resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://${plantAddress}:${(server.address() as AddressInfo).port}/api/v2/Mcp`;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 't', version: '1' },
      },
    };
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${h.tokens.agent}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(initialize),
    });
    t.is(response.status, 404);
    t.regex(JSON.stringify(await response.json()), /assistant\.mcp\.enabled/);
    // The loopback listener of the same daemon answers.
    t.truthy((await h.mcp(h.tokens.agent)).transport.sessionId);
  },
);
