/**
 * The planner on hand-made layouts, each with its minimum request count worked out by hand.
 */
import test from 'ava';
import { type PlanItem, planBlocks } from '../../../drivers/modbus/block-planner.js';

const limits = { maxCount: 125, maxGap: 16 };
const singles = (...starts: number[]): PlanItem[] => starts.map((start) => ({ start, count: 1 }));
const shape = (items: PlanItem[], options = limits) =>
  planBlocks(items, options).map(({ start, count }) => [start, count]);

test('contiguous registers take ⌈span / 125⌉ requests', (t) => {
  for (const span of [1, 124, 125, 126, 250, 251, 1000, 10_000]) {
    const items = singles(...Array.from({ length: span }, (_, i) => i));
    t.is(planBlocks(items, limits).length, Math.ceil(span / 125), `span ${span}`);
  }
  t.deepEqual(shape(singles(...Array.from({ length: 300 }, (_, i) => 1000 + i))), [
    [1000, 125],
    [1125, 125],
    [1250, 50],
  ]);
});

test('gaps up to maxGap are read through, wider gaps start a new request', (t) => {
  // 0 and 17: gap of 16 unused registers (1–16) → one request of 18.
  t.deepEqual(shape(singles(0, 17)), [[0, 18]]);
  // 0 and 18: gap of 17 → two requests.
  t.deepEqual(shape(singles(0, 18)), [
    [0, 1],
    [18, 1],
  ]);
  t.deepEqual(shape(singles(0, 5), { maxCount: 125, maxGap: 0 }), [
    [0, 1],
    [5, 1],
  ]);
  t.deepEqual(shape(singles(0, 1, 2), { maxCount: 125, maxGap: 0 }), [[0, 3]]);
});

test('a value is never split across requests; unordered and overlapping items', (t) => {
  // With reading through allowed: a float32 at 123–124 fits after 0, one at 124–125 does not.
  const wide = { maxCount: 125, maxGap: 200 };
  t.deepEqual(
    shape(
      [
        { start: 0, count: 1 },
        { start: 124, count: 2 },
      ],
      wide,
    ),
    [
      [0, 1],
      [124, 2],
    ],
  );
  t.deepEqual(
    shape(
      [
        { start: 0, count: 1 },
        { start: 123, count: 2 },
      ],
      wide,
    ),
    [[0, 125]],
  );
  // Listed out of order, with a bit tag and a uint16 sharing register 10 and a float inside.
  const items: PlanItem[] = [
    { start: 12, count: 2 },
    { start: 10, count: 1 },
    { start: 10, count: 1 },
    { start: 11, count: 4 },
    { start: 300, count: 4 },
  ];
  const blocks = planBlocks(items, limits);
  t.deepEqual(
    blocks.map(({ start, count }) => [start, count]),
    [
      [10, 5],
      [300, 4],
    ],
  );
  t.deepEqual(blocks[0]?.items.sort(), [0, 1, 2, 3]);
  t.deepEqual(blocks[1]?.items, [4]);
});

test('hand-made layouts need exactly their minimum', (t) => {
  // Two clusters 1000 apart: 0–199 (2 requests) and 1200–1209 (1) → 3.
  const layout = singles(
    ...Array.from({ length: 200 }, (_, i) => i),
    ...Array.from({ length: 10 }, (_, i) => 1200 + i),
  );
  t.is(planBlocks(layout, limits).length, 3);
  // Every 10th register over 0–1240: gaps of 9 are read through → span 1241 → ⌈1241/125⌉ = 10.
  t.is(planBlocks(singles(...Array.from({ length: 125 }, (_, i) => i * 10)), limits).length, 10);
  // Coils: 4000 contiguous bits in 2000-bit requests → 2; limit lowered to 100 → 40.
  const coils = singles(...Array.from({ length: 4000 }, (_, i) => i));
  t.is(planBlocks(coils, { maxCount: 2000, maxGap: 16 }).length, 2);
  t.is(planBlocks(coils, { maxCount: 100, maxGap: 16 }).length, 40);
  // maxRegistersPerRequest 10 over 4-register values at 0, 4, 8: 0–7 then 8–11 → 2.
  t.is(
    planBlocks(
      [0, 4, 8].map((start) => ({ start, count: 4 })),
      { maxCount: 10, maxGap: 0 },
    ).length,
    2,
  );
  t.deepEqual(planBlocks([], limits), []);
});

test('an item larger than maxCount is refused', (t) => {
  t.throws(() => planBlocks([{ start: 0, count: 5 }], { maxCount: 4, maxGap: 0 }), {
    instanceOf: RangeError,
  });
});
