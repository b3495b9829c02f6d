import { z } from 'zod';
import { profileSchema } from './schema.js';

/**
 * The JSON Schema of the profile, as committed in `config/profile.schema.json` for editors.
 * Generated from the zod schema (input side: fields with defaults are optional).
 */
export function profileJsonSchema(): Record<string, unknown> {
  return {
    ...z.toJSONSchema(profileSchema, { io: 'input', unrepresentable: 'any' }),
    title: 'tagd profile',
  };
}

/** The committed text of the JSON Schema file. */
export function profileJsonSchemaText(): string {
  return `${JSON.stringify(profileJsonSchema(), null, 2)}\n`;
}
