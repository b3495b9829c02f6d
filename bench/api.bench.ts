/**
 * Authenticated `GET /api/v2/Tags/Sample/{path}` throughput against a bare node:http server
 * answering the same JSON (docs/architecture.md, "Budgets": at least 0.7 × the bare server).
 *
 * Both servers get the same request (with the same Bearer token, which the bare server
 * ignores) from the same load tool, autocannon, with the same connections and sample length,
 * alternately. The bare server does the least a server answering this JSON can do: it looks the
 * sample up in a Map and serializes it, and answers with the same headers the API sends (the
 * security headers, Content-Type and Content-Length; the answers differ by no byte). The
 * subject is the real API: koa, the security headers, the problem middleware, the body parser,
 * the router, token verification against a real AccountService and UserStore, the TagView check,
 * the path validation and the TagStore lookup.
 */
import { apiServer, bareServer, fullTagId } from './api-servers.js';
import type { LoadCase } from './load-harness.js';

/** The design budget: subject/baseline ratio of request rates. */
const minRatio = 0.7;

function apiCase(): LoadCase {
  const token = { value: '' };
  const headers: Record<string, string> = {};
  return {
    kind: 'load',
    name: 'api: GET Tags/Sample, authenticated',
    unit: 'requests',
    path: `/api/v2/Tags/Sample/${fullTagId}`,
    // Filled once the subject has signed in: autocannon reads the object when a run starts.
    headers,
    baseline: bareServer(),
    subject: apiServer(token),
    budget: {
      minRatio,
      description: 'design doc: at least 0.7 × a bare node:http server answering the same JSON',
    },
    async verify(baselineUrl, subjectUrl) {
      headers.Authorization = `Bearer ${token.value}`;
      const [bare, api] = await Promise.all(
        [baselineUrl, subjectUrl].map((url) => fetch(url, { headers })),
      );
      if (!bare || !api) throw new Error('no answer');
      const [bareBody, apiBody] = [await bare.text(), await api.text()];
      if (bare.status !== 200 || api.status !== 200) {
        throw new Error(`status ${bare.status} / ${api.status}: ${apiBody}`);
      }
      if (bareBody !== apiBody) throw new Error(`bodies differ:\n${bareBody}\n${apiBody}`);
      const headerList = (response: Response) =>
        JSON.stringify([...response.headers].filter(([name]) => name !== 'date'));
      if (headerList(bare) !== headerList(api)) {
        throw new Error(`headers differ:\n${headerList(bare)}\n${headerList(api)}`);
      }
      const unauthenticated = await fetch(subjectUrl);
      if (unauthenticated.status !== 401) {
        throw new Error(`the API answered ${unauthenticated.status} without a token`);
      }
    },
  };
}

/** The cases of this file. Servers start only when a case runs. */
export const cases: LoadCase[] = [apiCase()];
