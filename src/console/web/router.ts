/**
 * Hash routing (`#/tags`, `#/publishers/new`): the server serves one page at `/` and needs no
 * fallback routes, so the console never shadows /api/v2, /swagger or /healthz.
 */
import { signal } from '@preact/signals';

/** The route: path segments after `#/`, and the query after `?`. */
export interface Route {
  segments: string[];
  query: URLSearchParams;
}

function parseHash(): Route {
  const hash = window.location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?', 2);
  return {
    segments: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(query),
  };
}

/** The current route, updated on every hash change. */
export const route = signal<Route>(parseHash());

window.addEventListener('hashchange', () => {
  route.value = parseHash();
});

/** Goes to a console route, e.g. `navigate('publishers', 'Line1')`. */
export function navigate(...segments: string[]): void {
  window.location.hash = `#/${segments.map(encodeURIComponent).join('/')}`;
}

/** The href of a console route. */
export function href(...segments: string[]): string {
  return `#/${segments.map(encodeURIComponent).join('/')}`;
}
