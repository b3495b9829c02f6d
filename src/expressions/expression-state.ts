/**
 * The state of a program's stateful functions (window functions and totalizers), owned by the
 * caller: a derived tag keeps one per tag, an alarm one per condition. Each stateful call in
 * the expression has a slot, numbered in the order the calls are written.
 */

import { TimeWindow, type WindowConfig } from './time-window.js';
import { Totalizer } from './totalizer.js';
import type { Value } from './value.js';

/** What a stateful call needs kept. */
export type SlotSpec =
  | { kind: 'window'; config: WindowConfig }
  /** `key`: the name the total is persisted under, `integrate#<n>` (n-th integrate, from 0). */
  | { kind: 'totalizer'; unitMs: number; key: string };

/** The state of one stateful call. */
export interface SlotState {
  window: TimeWindow | undefined;
  totalizer: Totalizer | undefined;
  /** Quality rank of the argument at the last evaluation (see evaluation-context.ts). */
  rank: number;
  reason: string | undefined;
  message: string | undefined;
  /** The function's result at the last evaluation. */
  result: Value;
}

/** See the module comment. */
export class ExpressionState {
  /** One per stateful call. */
  readonly slots: SlotState[];

  constructor(private readonly specs: readonly SlotSpec[]) {
    this.slots = specs.map((spec) => ({
      window: spec.kind === 'window' ? new TimeWindow(spec.config) : undefined,
      totalizer: spec.kind === 'totalizer' ? new Totalizer(spec.unitMs) : undefined,
      rank: 0,
      reason: undefined,
      message: undefined,
      result: undefined,
    }));
  }

  /** The running totals of the program's `integrate` calls, by key (`integrate#0`, …). */
  totals(): Record<string, number> {
    const totals: Record<string, number> = {};
    this.specs.forEach((spec, index) => {
      const totalizer = this.slots[index]?.totalizer;
      if (spec.kind === 'totalizer' && totalizer) totals[spec.key] = totalizer.total;
    });
    return totals;
  }

  /** Restores totals saved by {@link totals}; unknown keys and non-finite values are ignored. */
  restoreTotals(totals: Readonly<Record<string, unknown>>): void {
    this.specs.forEach((spec, index) => {
      const totalizer = this.slots[index]?.totalizer;
      const saved = spec.kind === 'totalizer' ? totals[spec.key] : undefined;
      if (totalizer && typeof saved === 'number' && Number.isFinite(saved)) totalizer.total = saved;
    });
  }
}
