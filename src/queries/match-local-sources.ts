/**
 * The current samples of a query set's Local bindings, matched once per distinct source, with
 * the work bounded and the event loop given back while a large store is scanned: a request of
 * many patterns over many tags must neither run unbounded nor hold up other requests
 * (`/healthz`, the other clients) while it runs.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { RequestError } from '../errors.js';
import type { Sample } from '../tags/sample.js';
import { compileTagPattern, isPattern } from '../tags/tag-pattern.js';
import type { TagStore } from '../tags/tag-store.js';
import type { TagQueryBinding } from './tag-query-binding.js';

/** Default {@link MatchOptions.yieldEvery}: 2,048 tags (about a millisecond of matching). */
export const defaultYieldEvery = 2_048;

/** Options of {@link matchLocalSources}. */
export interface MatchOptions {
  /**
   * Most matches the bindings may cost: each distinct pattern counts every tag of the store it
   * is compared with (plus one per distinct plain path), and each Local binding every tag its
   * source matches. Over it the match stops at once with 413 `query-too-large`.
   */
  maxMatches: number;
  /** Tags compared between two turns given back to the event loop. Default 2,048. */
  yieldEvery?: number;
}

/** The Local bindings' current samples, and what they cost. */
export interface LocalMatch {
  /** Distinct Local source → its current samples, in store order. */
  bySource: Map<string, Sample[]>;
  /** Values the Local bindings answer: each source's samples once per binding of it. */
  values: number;
  /** Matches counted against {@link MatchOptions.maxMatches}. */
  cost: number;
}

/**
 * Matches every distinct Local source of `bindings` against the store (a source repeated by
 * several bindings is matched once), giving the event loop a turn every `yieldEvery` tags.
 * Tags written meanwhile may or may not be seen, as with any read of a changing store.
 * @throws RequestError 413 `query-too-large` as soon as the cost passes `maxMatches`.
 */
export async function matchLocalSources(
  store: TagStore,
  bindings: readonly TagQueryBinding[],
  options: MatchOptions,
): Promise<LocalMatch> {
  const yieldEvery = options.yieldEvery ?? defaultYieldEvery;
  const uses = new Map<string, number>();
  for (const binding of bindings) {
    if (binding.store === 'Local') uses.set(binding.source, (uses.get(binding.source) ?? 0) + 1);
  }
  const bySource = new Map<string, Sample[]>();
  let cost = 0;
  let values = 0;
  let sinceTurn = 0;
  const charge = (amount: number) => {
    cost += amount;
    if (cost > options.maxMatches) throw tooLarge(options.maxMatches, store.size);
  };
  for (const [source, count] of uses) {
    const samples: Sample[] = [];
    bySource.set(source, samples);
    if (!isPattern(source)) {
      charge(1);
      const sample = store.get(source);
      if (sample !== undefined) {
        charge(count);
        samples.push(sample);
      }
    } else {
      const matches = compileTagPattern(source);
      // A live iterator: tags added during a turn given away are visited too (Map order).
      for (const id of store.ids()) {
        charge(1);
        if (matches(id)) {
          const sample = store.get(id);
          if (sample !== undefined) {
            charge(count);
            samples.push(sample);
          }
        }
        if (++sinceTurn >= yieldEvery) {
          sinceTurn = 0;
          await nextTurn();
        }
      }
    }
    values += samples.length * count;
  }
  return { bySource, values, cost };
}

function tooLarge(maxMatches: number, tags: number): RequestError {
  return new RequestError(
    'query-too-large',
    413,
    `The bindings need more than ${maxMatches.toLocaleString('en')} tag matches, the most one ` +
      'request may evaluate (profile queries.maxMatchesPerRequest): each distinct pattern is ' +
      `compared with every tag of the store (${tags.toLocaleString('en')} now), and each Local ` +
      'binding counts every tag it matches. Use fewer or narrower bindings.',
  );
}
