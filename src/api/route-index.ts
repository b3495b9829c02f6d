import type Router from '@koa/router';

/** A route layer of a @koa/router: its compiled pattern, methods and handlers. */
export type RouteLayer = Router['stack'][number];

/** How many leading path segments key a bucket: `/api/v2/Tags` is one bucket. */
const keySegments = 3;

/**
 * Which of a router's layers can match a request path, found without testing every pattern.
 *
 * @koa/router tests each layer's regular expression against every request. Here a layer whose
 * literal start (the path before its first parameter) holds at least three whole segments is
 * kept in a bucket keyed by those segments, lower-cased: `/api/v2/Tags/Sample/{*fullTagPath}`
 * lies in `/api/v2/tags`. A request then tests only its own bucket's layers and the few that
 * have no bucket (`/`, `/swagger`, a pattern starting with a parameter). The key is a
 * superset condition: a path a layer's pattern matches starts with that layer's literal
 * (ASCII case-insensitively, since the router is case-insensitive by default), so it has the
 * layer's key. Patterns are still tested, so a bucket never adds a match.
 */
export class RouteIndex {
  private readonly buckets = new Map<string, readonly RouteLayer[]>();
  private readonly unbucketed: readonly RouteLayer[];

  /** @param layers the router's layers, in registration order (the order they run in). */
  constructor(layers: readonly RouteLayer[]) {
    const keyed = new Map<string, RouteLayer[]>();
    const unbucketed: RouteLayer[] = [];
    const order = new Map<RouteLayer, number>();
    layers.forEach((layer, position) => {
      order.set(layer, position);
      const key = layerKey(layer.path);
      if (key === undefined) unbucketed.push(layer);
      else keyed.set(key, [...(keyed.get(key) ?? []), layer]);
    });
    // Each bucket holds its layers and the unbucketed ones, in registration order.
    const byPosition = (a: RouteLayer, b: RouteLayer) =>
      (order.get(a) as number) - (order.get(b) as number);
    for (const [key, bucket] of keyed) {
      this.buckets.set(key, [...bucket, ...unbucketed].sort(byPosition));
    }
    this.unbucketed = unbucketed;
  }

  /** The layers that may match `path` (the raw request path, without the query), in order. */
  candidates(path: string): readonly RouteLayer[] {
    return this.buckets.get(requestKey(path)) ?? this.unbucketed;
  }
}

/** The key of a request path: its first three segments, lower-cased (`/api/v2/tags`). */
function requestKey(path: string): string {
  let end = 0;
  for (let segment = 0; segment < keySegments; segment++) {
    end = path.indexOf('/', end + 1);
    if (end === -1) return path.toLowerCase();
  }
  return path.slice(0, end).toLowerCase();
}

/** Characters that start something other than literal text in a @koa/router (path-to-regexp 8) path. */
const patternSyntax = /[:*{}()[\]?+!\\]/;

/** The bucket of a layer, or undefined when its pattern may match paths of several keys. */
function layerKey(path: string | RegExp): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const syntax = path.search(patternSyntax);
  const literal = syntax === -1 ? path : path.slice(0, syntax);
  const key = requestKey(literal);
  // The literal must close its third segment (`/api/v2/Tags/…`), or be the whole path: a
  // literal `/api/v2/Tag` before a parameter would also match `/api/v2/Tags`.
  if (key.split('/').length - 1 !== keySegments) return undefined;
  if (key.length < literal.length || syntax === -1) return key;
  return undefined;
}
