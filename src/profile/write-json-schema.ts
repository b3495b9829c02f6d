/**
 * `npm run schema`: regenerates config/profile.schema.json from the zod schema. A test fails
 * while the committed file differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import { profileJsonSchemaText } from './json-schema.js';

const target = new URL('../../config/profile.schema.json', import.meta.url);
writeFileSync(target, profileJsonSchemaText());
process.stdout.write(`wrote ${target.pathname}\n`);
