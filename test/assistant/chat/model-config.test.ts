import test from 'ava';
import { assistantModelSchema } from '../../../src/assistant/chat/model-config.js';
import { profileSchema } from '../../../src/profile/schema.js';
import { findSecrets } from '../../../src/profile/secret-fields.js';
import { validateProfile } from '../../../src/profile/validate-profile.js';

test('the model takes its defaults: 60 s, 8 tool calls, 1024 tokens', (t) => {
  t.deepEqual(
    assistantModelSchema.parse({ baseUrl: 'http://ollama-host:11434/v1', model: 'llama3.1' }),
    {
      baseUrl: 'http://ollama-host:11434/v1',
      model: 'llama3.1',
      timeoutMs: 60_000,
      maxToolCalls: 8,
      maxOutputTokens: 1024,
    },
  );
});

test('the API key is a secret: sealed at rest, masked on the way out', (t) => {
  const model = { baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKey: 'sk-1' };
  t.deepEqual(findSecrets(profileSchema, { assistant: { model } }), [
    { path: ['assistant', 'model', 'apiKey'], value: 'sk-1' },
  ]);
});

test('a wrong model section names its fields', (t) => {
  const result = validateProfile({
    assistant: { model: { baseUrl: 'ftp://host/v1', model: '', maxToolCalls: -1, extra: 1 } },
  });
  t.false(result.ok);
  const paths = result.ok ? [] : result.errors.map((error) => error.path);
  for (const path of [
    'assistant.model.baseUrl',
    'assistant.model.model',
    'assistant.model.maxToolCalls',
  ]) {
    t.true(paths.includes(path), `${path} in ${paths.join(', ')}`);
  }
});
