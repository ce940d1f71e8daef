import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { leadingOf } from '../src/store/aggregate-tables.ts';
import { type AggregateSource, rowSpan, type SourceSegment } from '../src/store/aggregation.ts';

// A filter on a source's leading dimension (year) reads one span of its rows; the
// spans come from the rows themselves, and rows that do not ascend get none.

/** One segment holding dimension 0 alone, each row's code as given. */
const segmentOf = (codes: number[], size: number): SourceSegment => ({
  dimensions: [0],
  codes: Uint32Array.from(codes),
  codeOfCombination: [Uint32Array.from({ length: size }, (_, c) => c)],
});

test('each code starts where its first row is; a code without rows spans nothing', async () => {
  // Codes 0 0 2 2 2 4, of 6: codes 1, 3 and 5 have no rows.
  const leading = await leadingOf([segmentOf([0, 0, 2, 2, 2, 4], 6)], 6, 0, 6);
  assert.equal([...leading!.starts], [0, 2, 2, 5, 5, 6, 6]);
});

test('rows that do not ascend by the dimension have no spans; rows of one code do', async () => {
  assert.is(await leadingOf([segmentOf([0, 1, 0], 2)], 3, 0, 2), null);
  assert.equal([...(await leadingOf([segmentOf([1, 1, 1], 2)], 3, 0, 2))!.starts], [0, 0, 3]);
});

test('a span covers the allowed codes from the lowest to the highest; no filter reads every row', async () => {
  const leading = await leadingOf([segmentOf([0, 0, 1, 2, 2, 3], 4)], 6, 0, 4);
  const source = { rows: 6, leading } as unknown as AggregateSource;
  const cases: [number[] | undefined, { from: number; to: number }][] = [
    [undefined, { from: 0, to: 6 }],
    [[1], { from: 2, to: 3 }],
    [[2], { from: 3, to: 5 }],
    [[3, 0], { from: 0, to: 6 }],
    [[1, 3], { from: 2, to: 6 }],
    [[], { from: 0, to: 0 }],
  ];
  for (const [codes, span] of cases)
    assert.equal(rowSpan(source, new Map(codes ? [[0, new Set(codes)]] : [])), span, JSON.stringify(codes));
});

test.run();
