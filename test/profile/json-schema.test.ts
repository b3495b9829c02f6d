import { readFileSync } from 'node:fs';
import test from 'ava';
import { profileJsonSchema, profileJsonSchemaText } from '../../src/profile/json-schema.js';

const committedUrl = new URL('../../config/profile.schema.json', import.meta.url);

test('config/profile.schema.json is what the zod schema generates', (t) => {
  const committed = readFileSync(committedUrl, 'utf8');
  t.is(
    profileJsonSchemaText(),
    committed,
    'config/profile.schema.json is out of date with src/profile/schema.ts: run `npm run schema` and commit the result',
  );
});

test('the schema text is 2-space JSON with a final newline', (t) => {
  const text = profileJsonSchemaText();
  t.true(text.endsWith('}\n'));
  t.is(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
  t.deepEqual(JSON.parse(text), profileJsonSchema());
});

test('the JSON Schema rejects unknown keys and lists the top-level sections', (t) => {
  const schema = profileJsonSchema() as {
    $schema: string;
    title: string;
    type: string;
    additionalProperties: unknown;
    properties: Record<string, unknown>;
    required?: string[];
  };
  t.is(schema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  t.is(schema.title, 'tagd profile');
  t.is(schema.type, 'object');
  t.is(schema.additionalProperties, false);
  t.deepEqual(Object.keys(schema.properties), [
    '$schema',
    'server',
    'security',
    'queries',
    'drivers',
    'collections',
    'license',
    'history',
    'publishers',
    'extensions',
    'themes',
    'alarms',
    'alarmJournal',
    'notifications',
    'assistant',
  ]);
  // Every section has a default, so an editor must not demand any of them.
  t.is(schema.required, undefined);
});

test('nested objects in the JSON Schema reject unknown keys too', (t) => {
  const properties = profileJsonSchema().properties as Record<
    string,
    {
      additionalProperties?: unknown;
      properties?: Record<string, { additionalProperties?: unknown }>;
    }
  >;
  t.is(properties.server?.additionalProperties, false);
  t.is(properties.server?.properties?.http?.additionalProperties, false);
});
