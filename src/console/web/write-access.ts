/**
 * Whether the signed-in account may write a tag, and its limits: the tag's browse answer
 * (`GET /api/v2/Tags`) carries `metadata.writable` and `writeMin`/`writeMax`.
 */
import { api } from './api-client';
import type { Sample } from './api-types';

/** How a tag may be written. */
export interface WriteAccess {
  writeMin?: number;
  writeMax?: number;
}

/** The tag's write access, or undefined when it cannot be written. @throws ApiError */
export async function loadWriteAccess(path: string): Promise<WriteAccess | undefined> {
  const page = await api<{ tags: Sample[] }>(
    `/api/v2/Tags?pattern=${encodeURIComponent(path)}&limit=1`,
  );
  const meta = page.tags.find((tag) => tag.fullTagId === path)?.metadata;
  if (!meta?.writable) return undefined;
  return {
    ...(meta.writeMin !== undefined ? { writeMin: meta.writeMin } : {}),
    ...(meta.writeMax !== undefined ? { writeMax: meta.writeMax } : {}),
  };
}
