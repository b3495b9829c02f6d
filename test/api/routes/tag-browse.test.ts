import test from 'ava';
import { encodeCursor } from '../../../src/api/routes/tag-browse.js';
import type { Sample } from '../../../src/tags/sample.js';
import { type ApiHarness, startApi } from '../../helpers/api-harness.js';

interface Page {
  tags: Sample[];
  nextCursor?: string;
}

function good(fullTagId: string, value: number): Sample {
  return { fullTagId, utcTimestamp: '2026-01-01T00:00:00.000Z', quality: 'Good', value };
}

async function browseAll(api: ApiHarness, token: string, query: string): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | undefined;
  do {
    const response = await api.request(
      `/api/v2/Tags?${query}${cursor ? `&cursor=${cursor}` : ''}`,
      { token },
    );
    if (response.status !== 200) throw new Error(JSON.stringify(response.body));
    const page = response.json as unknown as Page;
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

test('pages through a few thousand tags ordered by path, each exactly once', async (t) => {
  const api = await startApi(t);
  const ids: string[] = [];
  // Written out of order, across components and depths.
  for (let i = 2999; i >= 0; i--) ids.push(`Line${i % 7}/Cell${i % 13}/T${i}`);
  api.store.write(ids.map((id, i) => good(id, i)));
  const token = await api.signIn((await api.addUser('vera', ['Viewers'])).username);

  const pages = await browseAll(api, token, 'limit=1000');
  t.is(pages.length, 3);
  t.is(pages[2]?.nextCursor, undefined);
  const paths = pages.flatMap((page) => page.tags.map((sample) => sample.fullTagId));
  t.deepEqual(paths, [...ids].sort());
  t.deepEqual(pages[0]?.tags[0], api.store.get(paths[0] as string));

  const defaults = await api.request('/api/v2/Tags', { token });
  t.is((defaults.json.tags as unknown[]).length, 500, 'default limit');
  t.is(typeof defaults.json.nextCursor, 'string');
});

test('a pattern narrows the browse; a tag added meanwhile is neither skipped nor repeated', async (t) => {
  const api = await startApi(t);
  api.store.write([
    good('A/x/1', 1),
    good('A/y/2', 2),
    good('A/x/3', 3),
    good('B/x/4', 4),
    good('A/x/deeper/5', 5),
  ]);
  const token = await api.signIn((await api.addUser('vera', ['Viewers'])).username);
  const first = await api.request('/api/v2/Tags?pattern=A/*/*&limit=2', { token });
  t.deepEqual(
    (first.json.tags as Sample[]).map((sample) => sample.fullTagId),
    ['A/x/1', 'A/x/3'],
  );
  // Sorts before the cursor: must not show up; sorts after: must show up once.
  api.store.write([good('A/a/0', 0), good('A/z/9', 9)]);
  const second = await api.request(
    `/api/v2/Tags?pattern=A/*/*&limit=2&cursor=${first.json.nextCursor}`,
    { token },
  );
  t.deepEqual(
    (second.json.tags as Sample[]).map((sample) => sample.fullTagId),
    ['A/y/2', 'A/z/9'],
  );
  t.is(second.json.nextCursor, undefined);
  const deep = await api.request('/api/v2/Tags?pattern=A/**', { token });
  t.is((deep.json.tags as unknown[]).length, 6);
  const none = await api.request('/api/v2/Tags?pattern=Nothing/**', { token });
  t.deepEqual(none.json, { tags: [] });
});

test('invalid pattern, limit and cursor answer 400 naming the field', async (t) => {
  const api = await startApi(t);
  const token = await api.signIn((await api.addUser('vera', ['Viewers'])).username);
  const cases: [string, string][] = [
    ['pattern=a//b', 'pattern'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
    ['cursor=***', 'cursor'],
    [`cursor=${encodeCursor('not//a/path')}`, 'cursor'],
  ];
  for (const [query, field] of cases) {
    const response = await api.request(`/api/v2/Tags?${query}`, { token });
    t.is(response.status, 400, query);
    t.is(response.json.code, 'validation-failed', query);
    t.deepEqual(
      (response.json.errors as { path: string }[]).map((error) => error.path),
      [field],
      query,
    );
  }
  t.is((await api.request('/api/v2/Tags?limit=1000', { token })).status, 200);
  t.is((await api.request('/api/v2/Tags')).status, 401);
});
