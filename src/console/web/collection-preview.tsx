import { useSignal } from '@preact/signals';
import { api, failureMessage } from './api-client';

/** Tags listed in the preview; the rest are counted. */
export const previewShown = 100;
/** Most tags counted per pattern (10 pages of 1,000); beyond, "more than". */
const countLimit = 10_000;

interface TagPage {
  tags: { fullTagId: string }[];
  nextCursor?: string;
}

/** The paths one pattern matches now, at most {@link countLimit}; `more` when it stopped there. */
async function matching(pattern: string): Promise<{ paths: string[]; more: boolean }> {
  const paths: string[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ pattern, limit: '1000' });
    if (cursor) query.set('cursor', cursor);
    const page = await api<TagPage>(`/api/v2/Tags?${query}`);
    for (const tag of page.tags) paths.push(tag.fullTagId);
    cursor = page.nextCursor;
  } while (cursor && paths.length < countLimit);
  return { paths, more: cursor !== undefined };
}

/** Props of {@link CollectionPreview}. */
export interface CollectionPreviewProps {
  /** The members as typed: one path or pattern per line (empty lines ignored). */
  lines(): string[];
}

/**
 * "Preview matching tags": the tags the members match now (through `GET /api/v2/Tags`), the
 * first {@link previewShown} listed and every one counted, and a pattern that matches nothing
 * named, so a typo shows before the collection is saved.
 */
export function CollectionPreview({ lines }: CollectionPreviewProps) {
  const busy = useSignal(false);
  const result = useSignal<
    { paths: string[]; more: boolean; empty: string[]; error?: string } | undefined
  >(undefined);
  const preview = async () => {
    busy.value = true;
    try {
      const all = new Set<string>();
      const empty: string[] = [];
      let more = false;
      for (const line of lines()) {
        const found = await matching(line);
        if (found.paths.length === 0) empty.push(line);
        for (const path of found.paths) all.add(path);
        more ||= found.more;
      }
      result.value = { paths: [...all].sort(), more, empty };
    } catch (error) {
      result.value = {
        paths: [],
        more: false,
        empty: [],
        error: failureMessage(error),
      };
    } finally {
      busy.value = false;
    }
  };
  const value = result.value;
  return (
    <section class="collection-preview" aria-labelledby="collection-preview-title">
      <h2 id="collection-preview-title" class="section-title">
        Matching tags
      </h2>
      <button type="button" disabled={busy.value} onClick={() => void preview()}>
        Preview matching tags
      </button>
      <div role="status" data-testid="collection-preview">
        {busy.value ? (
          <p>Matching…</p>
        ) : value === undefined ? null : value.error ? (
          <p class="form-error">{value.error}</p>
        ) : (
          <>
            <p>
              {value.paths.length === 0
                ? 'No tag matches these members now.'
                : `${value.more ? 'More than ' : ''}${value.paths.length} tag${
                    value.paths.length === 1 ? '' : 's'
                  } match${value.paths.length === 1 ? 'es' : ''}${
                    value.paths.length > previewShown
                      ? `; the first ${previewShown} are listed`
                      : ''
                  }.`}
            </p>
            {value.empty.length > 0 ? (
              <p class="notice">
                Matching nothing now: {value.empty.map((line) => `'${line}'`).join(', ')}.
              </p>
            ) : null}
            {value.paths.length > 0 ? (
              <ul class="chips">
                {value.paths.slice(0, previewShown).map((path) => (
                  <li key={path}>
                    <code class="chip">{path}</code>
                  </li>
                ))}
              </ul>
            ) : null}
          </>
        )}
      </div>
    </section>
  );
}
