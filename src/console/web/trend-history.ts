/**
 * A trend's history through `POST /api/v2/TagQuerySet`: one Logged binding per pen over the
 * trend's range, raw or aggregated as planned (Avg per window for numbers, Max for booleans:
 * On when it was On at any time in the window). One query set per page, replaced on every load,
 * so a trend reloaded many times never piles sets up against the account's limit of 100.
 */
import { ApiError, api } from './api-client';
import type { Sample } from './api-types';
import type { PenInfo } from './trend-pens';
import type { QueryPlan } from './trend-range';

let querySetId: string | undefined;

/** The aggregation function of a pen's windows. */
export function aggregationOf(pen: PenInfo): 'Avg' | 'Max' {
  return pen.kind === 'boolean' ? 'Max' : 'Avg';
}

/** What the values of a pen are, for people and the CSV's `series` column: `raw`, `avg 1m`. */
export function seriesLabel(pen: PenInfo, plan: QueryPlan): string {
  return plan.mode === 'Raw' ? 'raw' : `${aggregationOf(pen).toLowerCase()} ${plan.window}`;
}

/** True for the 400 the API answers when the values would exceed one response (100,000). */
export function isTooManyValues(error: unknown): boolean {
  return (
    error instanceof ApiError &&
    error.status === 400 &&
    (error.problem.errors ?? []).some((item) => item.path === 'bindings')
  );
}

/**
 * The logged samples of each pen between `start` and `stop` (API time points: `now-3600s`,
 * `now`, ISO 8601), in the order of `pens`.
 * @throws ApiError: 409 history-not-configured, 400 when too many values (see {@link isTooManyValues}).
 */
export async function readTrendHistory(
  pens: readonly PenInfo[],
  start: string,
  stop: string,
  plan: QueryPlan,
): Promise<Sample[][]> {
  const bindings = pens.map((pen) => ({
    source: pen.path,
    store: 'Logged',
    timeRangeStart: start,
    timeRangeStop: stop,
    seriesMode: plan.mode,
    ...(plan.mode === 'Aggregated'
      ? { aggregationWindow: plan.window, aggregationFunction: aggregationOf(pen) }
      : {}),
  }));
  type Answer = { srcSetId: string; values: (Sample & { binding: number })[] };
  const request = (srcSetId?: string) =>
    api<Answer>('/api/v2/TagQuerySet', {
      method: 'POST',
      body: { ...(srcSetId ? { srcSetId } : {}), bindings },
    });
  let answer: Answer;
  try {
    answer = await request(querySetId);
  } catch (error) {
    // The set expired (10 minutes unpolled) or belonged to an earlier sign-in: start a new one.
    if (!(error instanceof ApiError) || error.status !== 404 || !querySetId) throw error;
    answer = await request();
  }
  querySetId = answer.srcSetId;
  const byPen: Sample[][] = pens.map(() => []);
  for (const value of answer.values) byPen[value.binding]?.push(value);
  return byPen;
}
