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
