/**
 * The registry's own rules, with the API harness's real accounts: permission, token validity,
 * concurrency per account, validation, hidden failures, audit of every call.
 */
import test, { type ExecutionContext } from 'ava';
import { z } from 'zod';
import { defineTool } from '../../src/assistant/assistant-tool.js';
import {
  AssistantToolRegistry,
  maxConcurrentCallsPerAccount,
} from '../../src/assistant/tool-registry.js';
import { startApi } from '../helpers/api-harness.js';

async function setup(t: ExecutionContext) {
  const api = await startApi(t);
  await api.addUser('viewer', ['Viewers']);
  const viewer = api.accounts.authenticate(await api.signIn('viewer'), ['access']);
  const releases: (() => void)[] = [];
  const tools = [
    defineTool({
      name: 'slow',
      title: 'Slow',
      description: 'Waits until released.',
      permission: 'TagView',
      readOnly: true,
      input: z.strictObject({}),
      handle: () => new Promise<string>((resolve) => releases.push(() => resolve('done'))),
    }),
    defineTool({
      name: 'broken',
      title: 'Broken',
      description: 'Fails.',
      permission: 'TagView',
      readOnly: true,
      input: z.strictObject({ n: z.int() }),
      handle: () => {
        throw new Error('secret internals /var/lib/tagd');
      },
    }),
    defineTool({
      name: 'admin',
      title: 'Admin',
      description: 'Needs UserManage.',
      permission: 'UserManage',
      readOnly: true,
      input: z.strictObject({}),
      handle: () => 'ok',
    }),
  ];
  const registry = new AssistantToolRegistry(api.deps, { tools });
  return { api, viewer, registry, releases };
}

test('a tool the account lacks is not listed and refused 403', async (t) => {
  const { registry, viewer } = await setup(t);
  t.deepEqual(
    registry.toolsFor(viewer).map((tool) => tool.name),
    ['slow', 'broken'],
  );
  const outcome = await registry.call('admin', {}, { principal: viewer, via: 'chat' });
  t.like(outcome, { ok: false, error: { code: 'forbidden', status: 403 } });
});

test('invalid input names the field; a failure is logged, never shown', async (t) => {
  const { registry, viewer, api } = await setup(t);
  const invalid = await registry.call('broken', { n: 'x' }, { principal: viewer, via: 'mcp' });
  t.like(invalid, { ok: false, error: { code: 'validation-failed' } });
  t.is(invalid.ok ? undefined : invalid.error.errors?.[0]?.path, 'n');
  const failed = await registry.call('broken', { n: 1 }, { principal: viewer, via: 'mcp' });
  t.like(failed, { ok: false, error: { code: 'internal', status: 500 } });
  t.false(JSON.stringify(failed).includes('/var/lib'));
  t.truthy(api.logs.lines.find((line) => line.msg === 'an assistant tool failed'));
});

test('a revoked token calls nothing more', async (t) => {
  const { registry, viewer, api } = await setup(t);
  const user = api.users.require('viewer');
  await api.users.update(user, {}, true);
  const outcome = await registry.call('broken', { n: 1 }, { principal: viewer, via: 'mcp' });
  t.like(outcome, { ok: false, error: { code: 'unauthorized', status: 401 } });
});

test(`at most ${maxConcurrentCallsPerAccount} calls of one account run at once`, async (t) => {
  const { registry, viewer, releases } = await setup(t);
  const caller = { principal: viewer, via: 'chat' as const, conversationId: 'c1' };
  const running = Array.from({ length: maxConcurrentCallsPerAccount }, () =>
    registry.call('slow', {}, caller),
  );
  const refused = await registry.call('slow', {}, caller);
  t.like(refused, { ok: false, error: { code: 'too-many-requests', status: 429 } });
  for (const release of releases) release();
  for (const outcome of await Promise.all(running)) t.like(outcome, { ok: true, json: '"done"' });
  const after = registry.call('slow', {}, caller);
  releases.at(-1)?.();
  t.like(await after, { ok: true });
});

test('every call is audited: account, tool, arguments, via, conversation, outcome', async (t) => {
  const { registry, viewer, api } = await setup(t);
  await registry.call(
    'admin',
    { x: 'y'.repeat(2000) },
    { principal: viewer, via: 'chat', conversationId: 'conv-1' },
  );
  const line = api.logs.lines.find((candidate) => candidate.event === 'assistant-tool');
  t.like(line, {
    component: 'audit',
    account: 'viewer',
    tool: 'admin',
    via: 'chat',
    conversationId: 'conv-1',
    outcome: 'forbidden',
  });
  t.true(String(line?.arguments).length <= 1025, 'arguments bounded');
});
