import { z } from 'zod';
import { maxPathLength, segmentPattern, tagPathProblem } from '../src/tags/tag-path.js';

/** A driver's name: one tag-path segment, the first segment of every tag it writes. */
export const componentNameSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(segmentPattern, 'may only hold letters, digits and _ . : -')
  .describe('Component name: first segment of every tag of this driver.');

/** A tag's path below its component, one or more segments. */
export const relativeTagPathSchema = z
  .string()
  .min(1)
  .max(maxPathLength)
  .superRefine((path, context) => {
    const problem = tagPathProblem(path);
    if (problem !== undefined)
      context.addIssue({ code: 'custom', message: `Invalid tag path: ${problem}` });
  })
  .describe('Tag path below the component: segments of letters, digits and _ . : - joined by /.');

/**
 * The fields that make a tag writable, shared by the drivers that can write. A tag is
 * writable only with `writable: true` and its driver's `allowWrites: true`.
 */
export const tagWriteFields = {
  writable: z
    .boolean()
    .optional()
    .describe(
      'Clients holding TagWrite may write this tag (POST /api/v2/Tags/Write), once the ' +
        'driver’s allowWrites is true too. Default: false.',
    ),
  writeMin: z
    .number()
    .finite()
    .optional()
    .describe(
      'Least value a client may write, in engineering units (after scaling). Numbers only.',
    ),
  writeMax: z
    .number()
    .finite()
    .optional()
    .describe('Greatest value a client may write, in engineering units. Numbers only.'),
};

/** The master switch of a driver that can write. */
export const allowWritesField = z
  .boolean()
  .optional()
  .describe(
    'Master switch for writes to this device: false (the default) refuses every write, even to ' +
      'tags marked writable.',
  );

/** Issues of the write fields of one tag: writeMin above writeMax, a range on a non-writable tag. */
export function writeFieldIssues(tag: {
  writable?: boolean;
  writeMin?: number | undefined;
  writeMax?: number | undefined;
}): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  if (tag.writeMin !== undefined && tag.writeMax !== undefined && tag.writeMin > tag.writeMax)
    issues.push({ path: ['writeMax'], message: 'writeMax must be at least writeMin' });
  if (!tag.writable && (tag.writeMin !== undefined || tag.writeMax !== undefined))
    issues.push({
      path: [tag.writeMin !== undefined ? 'writeMin' : 'writeMax'],
      message: 'writeMin and writeMax are for writable tags',
    });
  return issues;
}
