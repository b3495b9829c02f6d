/**
 * The proposal service on its own: bounds, a file that cannot be read, and the expiry in real
 * time (the manual-clock expiry is in test/api/routes/assistant-proposals.test.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { assistantConfigSchema } from '../../src/assistant/assistant-config.js';
import {
  maxPendingPerAccount,
  ProposalService,
  proposalsFileName,
} from '../../src/assistant/proposal-service.js';
import type { Principal } from '../../src/auth/account-service.js';
import { permissionsOf } from '../../src/auth/permissions.js';
import type { TagWriter } from '../../src/tags/tag-writer.js';
import { captureLogs } from '../helpers/log-capture.js';
import { tempDir } from '../helpers/temp-dir.js';

const operator = {
  user: { id: 'u1', username: 'operator', kind: 'user' },
  claims: {},
  permissions: new Set(permissionsOf(['Operators'])),
} as unknown as Principal;

// Only isWritable is asked before a confirmation: the writes themselves are the API tests'.
const writer = { isWritable: (id: string) => id === 'Line/Setpoint' } as unknown as TagWriter;

async function open(stateDir: string, config: Record<string, unknown>, now = Date.now) {
  const logs = captureLogs();
  const service = await ProposalService.open({
    stateDir,
    now,
    audit: logs.logger,
    logger: logs.logger,
    config: () => assistantConfigSchema.parse(config),
    writer,
  });
  return { service, logs };
}

const caller = { principal: operator, via: 'chat' as const, conversationId: 'c1' };
const request = { kind: 'write' as const, fullTagId: 'Line/Setpoint', value: 1, reason: 'r' };

test(`an account has at most ${maxPendingPerAccount} proposals pending`, async (t) => {
  const { service } = await open(await tempDir(t), { writableTags: ['Line/**'] });
  for (let i = 0; i < maxPendingPerAccount; i++) await service.propose(caller, request);
  const error = await t.throwsAsync(service.propose(caller, request));
  t.is((error as { code?: string }).code, 'limit-reached');
});

test('a tag that is in writableTags but not writable is refused at once', async (t) => {
  const { service } = await open(await tempDir(t), { writableTags: ['Line/**'] });
  const error = await t.throwsAsync(
    service.propose(caller, { ...request, fullTagId: 'Line/Speed' }),
  );
  t.is((error as { code?: string }).code, 'validation-failed');
});

test('a proposals file that does not parse is logged and the service starts empty', async (t) => {
  const stateDir = await tempDir(t);
  await writeFile(join(stateDir, proposalsFileName), '{ "proposals": [');
  const { service, logs } = await open(stateDir, { writableTags: ['Line/**'] });
  t.deepEqual(service.list(operator), []);
  t.truthy(logs.lines.find((line) => /proposals file could not be read/.test(String(line.msg))));
  await service.propose(caller, request);
  t.is(service.list(operator).length, 1, 'and it is replaced at the next change');
});

test('real time: a proposal expires after proposalExpiryMinutes of the system clock', async (t) => {
  t.timeout(120_000);
  const { service } = await open(await tempDir(t), {
    writableTags: ['Line/**'],
    proposalExpiryMinutes: 0.5,
  });
  const proposal = await service.propose(caller, request);
  t.is(service.list(operator)[0]?.status, 'Pending');
  // Waits for the clock, not a duration: polled until the expiry time has passed.
  while (Date.now() <= Date.parse(proposal.expiresAt)) {
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  t.is(service.list(operator)[0]?.status, 'Expired');
  const error = await t.throwsAsync(service.confirm(proposal.id, operator));
  t.is((error as { code?: string }).code, 'proposal-not-pending');
});
