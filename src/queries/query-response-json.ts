/**
 * The JSON text of a TagQuerySet answer (`{ srcSetId, values, truncated? }`), written in pieces
 * with turns given back to the event loop: an answer of 100,000 values built and serialized in
 * one go holds every other request (and `/healthz`) for as long, which on a busy gateway is
 * seconds. The text equals `JSON.stringify` of the answer with each value `{ ...sample, binding }`.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Sample } from '../tags/sample.js';

/** Default {@link QueryResponseOptions.yieldEvery}: 2,048 values. */
export const defaultValuesPerTurn = 2_048;

/** The samples answered for one binding. */
export interface BindingValues {
  /** Index into the set's bindings. */
  binding: number;
  samples: readonly Sample[];
}

/** Options of {@link queryResponseJson}. */
export interface QueryResponseOptions {
  /** Present (true) when a Delta was cut at the response limit. */
  truncated?: boolean;
  /** Values written between two turns given back to the event loop. Default 2,048. */
  yieldEvery?: number;
}

/**
 * Serializes an answer, values in the order given. A sample shared by several bindings (the
 * same object) is serialized once.
 */
export async function queryResponseJson(
  srcSetId: string,
  values: Iterable<BindingValues>,
  options: QueryResponseOptions = {},
): Promise<string> {
  const yieldEvery = options.yieldEvery ?? defaultValuesPerTurn;
  // Sample → its JSON without the closing brace, so that `,"binding":n}` completes it.
  const heads = new Map<Sample, string>();
  const pieces: string[] = [`{"srcSetId":${JSON.stringify(srcSetId)},"values":[`];
  let piece = '';
  let written = 0;
  for (const { binding, samples } of values) {
    for (const sample of samples) {
      let head = heads.get(sample);
      if (head === undefined) {
        head = JSON.stringify(sample).slice(0, -1);
        heads.set(sample, head);
      }
      piece += `${written === 0 ? '' : ','}${head},"binding":${binding}}`;
      if (++written % yieldEvery === 0) {
        pieces.push(piece);
        piece = '';
        await nextTurn();
      }
    }
  }
  pieces.push(piece, options.truncated ? '],"truncated":true}' : ']}');
  return pieces.join('');
}
