import type { CodeArray } from './column-store.ts';
import { powerOfTen, scaled, scalesExactly, writtenUnits } from './decimals.ts';
import { ExactSums } from './exact-sum.ts';
import { inSlices, Turns } from './slices.ts';

// Grouped totals over a served dataset's columns: a count, an exact sum, a minimum and
// a maximum per group and metric. The same scan builds the rollup tables at load time
// (every row, grouped by the dimensions a rollup keeps) and answers each aggregate
// request (from the table that can with the fewest rows read), so a rollup's totals
// are exactly those of the rows it stands for.

/** Adjacent dimensions stored as one combination code per row (ColumnStore's layout). */
export interface SourceSegment {
  /** Indexes of the dataset's dimensions held here. */
  readonly dimensions: readonly number[];
  readonly codes: CodeArray;
  /** For each dimension held: its dictionary code in each combination. */
  readonly codeOfCombination: readonly CodeArray[];
}

/**
 * One metric's totals per row: a served row has one value; a rollup row the exact sum
 * (its partials, in integers of 10^-scale when the column has a scale), min and max of
 * the rows it stands for. `scale`: the column's decimals (src/store/decimals.ts), or
 * null for one summed as doubles.
 */
export type MetricTotals =
  | { readonly values: Float64Array; readonly scale: number | null }
  | {
      readonly offsets: Uint32Array;
      readonly partials: Float64Array;
      readonly min: Float64Array;
      readonly max: Float64Array;
      readonly scale: number | null;
    };

/** Rows an aggregate can read: the served store, or a rollup of it. */
export interface AggregateSource {
  readonly rows: number;
  /** Indexes of the dataset's dimensions this source keeps. */
  readonly kept: ReadonlySet<number>;
  /** Dimensions it dropped after keeping only rows with one code there (a rollup of national rows: state ""). */
  readonly fixed: ReadonlyMap<number, number>;
  readonly segments: readonly SourceSegment[];
  /** Served rows each row stands for; null when it is one each. */
  readonly counts: Uint32Array | null;
  /** In the dataset's metric order. */
  readonly metrics: readonly MetricTotals[];
  /** Where each code of the dataset's first dimension starts, when the rows ascend by it; null when they do not. */
  readonly leading: Leading | null;
}

/**
 * The rows of each code of a source's leading dimension (year, the first of every
 * dataset's), which its rows ascend by: a filter on it reads one span of rows instead
 * of all of them (one year of the 31 at scale 1 reads about a 31st of a rollup's rows).
 */
export interface Leading {
  readonly dimension: number;
  /** Code c's rows are [starts[c], starts[c + 1]); one more entry than the dictionary has codes. */
  readonly starts: Uint32Array;
}

export interface MetricNeeds {
  readonly index: number;
  readonly sum: boolean;
  readonly min: boolean;
  readonly max: boolean;
}

export interface Grouping {
  /** Dimension indexes to group by, in order. */
  readonly groupBy: readonly number[];
  /** Dictionary size of every dimension of the dataset, by index. */
  readonly sizes: readonly number[];
  /** Dimension index → the codes a row may hold there; dimensions absent here are not filtered. */
  readonly allowed: ReadonlyMap<number, ReadonlySet<number>>;
  readonly metrics: readonly MetricNeeds[];
  /**
   * Totals of another dataset whose rows line up with the source's row for row (the
   * same dimension values in the same order: turnover beside ggr), summed exactly
   * into the same groups in the same pass.
   */
  readonly aligned?: readonly MetricTotals[];
  /** The slices' turns, with the signal that stops the grouping when its request is cancelled. */
  readonly turns?: Turns;
}

/** Grouped totals; a group's code for a dimension rolled up (a subtotal) is -1. */
export interface Groups {
  readonly count: number;
  /** Dimension indexes grouped by; group g's codes are `codes[g * width ... + width]`. */
  readonly groupBy: readonly number[];
  readonly codes: Int32Array;
  /** Served rows in each group. */
  readonly rows: Float64Array;
  /** Per metric of `needs`, in that order: each group's exact sum, minimum and maximum. */
  readonly sums: readonly (ExactSums | null)[];
  readonly min: readonly (Float64Array | null)[];
  readonly max: readonly (Float64Array | null)[];
  readonly needs: readonly MetricNeeds[];
  /** Each group's exact sum of every `Grouping.aligned` totals, in that order. */
  readonly aligned: readonly ExactSums[];
}

/** The rows [from, to) that can pass `allowed`: the span of its leading dimension's allowed codes, else every row. */
export function rowSpan(source: AggregateSource, allowed: ReadonlyMap<number, ReadonlySet<number>>): { from: number; to: number } {
  const codes = source.leading && allowed.get(source.leading.dimension);
  if (!codes) return { from: 0, to: source.rows };
  if (codes.size === 0) return { from: 0, to: 0 };
  const { starts } = source.leading!;
  let low = Infinity;
  let high = -1;
  for (const code of codes) {
    low = Math.min(low, code);
    high = Math.max(high, code);
  }
  return { from: starts[low]!, to: starts[high + 1]! };
}

interface ActiveSegment {
  readonly codes: CodeArray;
  /** 1 where a combination passes every filter on its dimensions; null when none is filtered. */
  readonly pass: Uint8Array | null;
  /** A combination's share of the group key; null when none of its dimensions is grouped. */
  readonly part: Float64Array | null;
}

// Group keys below this index a dense table; a Map beyond it.
const DENSE_KEYS = 1 << 20;

/** How many group keys a grouping by dimensions of these dictionary sizes numbers: one number per group must stay an exact integer (below 2^53). */
export const groupKeySpace = (sizes: readonly number[]) => sizes.reduce((product, size) => product * size, 1);

/** Groups `source`'s rows that pass `grouping.allowed` by `grouping.groupBy`, in first-seen order. */
export async function group(source: AggregateSource, grouping: Grouping): Promise<Groups> {
  const { groupBy, sizes, allowed, metrics, turns = new Turns() } = grouping;
  const width = groupBy.length;
  // Mixed radix over the grouped dimensions' dictionary sizes: one number per group.
  const radix = groupBy.map((_, i) => groupBy.slice(i + 1).reduce((product, d) => product * sizes[d]!, 1));
  const keySpace = groupKeySpace(groupBy.map((d) => sizes[d]!));
  if (!Number.isSafeInteger(keySpace)) throw new Error(`group keys over ${groupBy.join(',')} exceed 2^53`);

  for (const d of [...groupBy, ...allowed.keys()]) {
    if (!source.kept.has(d)) throw new Error(`dimension ${d} is not kept by this source`);
  }
  const active: ActiveSegment[] = [];
  for (const segment of source.segments) {
    const filtered = segment.dimensions.some((d) => allowed.has(d));
    const grouped = segment.dimensions.some((d) => groupBy.includes(d));
    if (!filtered && !grouped) continue;
    const combinations = segment.codeOfCombination[0]!.length;
    const pass = filtered ? new Uint8Array(combinations) : null;
    const part = grouped ? new Float64Array(combinations) : null;
    for (let c = 0; c < combinations; c++) {
      let ok = 1;
      let share = 0;
      segment.dimensions.forEach((d, k) => {
        const code = segment.codeOfCombination[k]![c]!;
        if (allowed.get(d)?.has(code) === false) ok = 0;
        const position = groupBy.indexOf(d);
        if (position >= 0) share += code * radix[position]!;
      });
      if (pass) pass[c] = ok;
      if (part) part[c] = share;
    }
    active.push({ codes: segment.codes, pass, part });
  }

  // First which group each row of the span falls in (-1: filtered out), then each total in a loop of its own.
  const span = rowSpan(source, allowed);
  const index = keySpace <= DENSE_KEYS ? new DenseIndex(keySpace) : new MapIndex();
  const keys: number[] = [];
  const groupOf = new Int32Array(span.to - span.from);
  await inSlices(
    groupOf.length,
    (start, end) => {
      for (let r = span.from + start; r < span.from + end; r++) {
        let key = 0;
        let g = 0;
        for (let s = 0; s < active.length; s++) {
          const segment = active[s]!;
          const c = segment.codes[r]!;
          if (segment.pass !== null && segment.pass[c] === 0) {
            g = -1;
            break;
          }
          if (segment.part !== null) key += segment.part[c]!;
        }
        if (g === 0) {
          g = index.find(key, keys.length);
          if (g === keys.length) keys.push(key);
        }
        groupOf[r - span.from] = g;
      }
    },
    turns,
  );
  const count = keys.length;

  const rows = new Float64Array(count);
  const { counts } = source;
  await inSlices(
    groupOf.length,
    (start, end) => {
      for (let i = start; i < end; i++) {
        const g = groupOf[i]!;
        if (g >= 0) rows[g] = rows[g]! + (counts === null ? 1 : counts[span.from + i]!);
      }
    },
    turns,
  );
  const sums: (ExactSums | null)[] = [];
  const min: (Float64Array | null)[] = [];
  const max: (Float64Array | null)[] = [];
  for (const need of metrics) {
    const totals = source.metrics[need.index]!;
    sums.push(need.sum ? await sumGroups(totals, groupOf, span.from, count, turns) : null);
    min.push(need.min ? await extremeGroups(totals, groupOf, span.from, count, -1, turns) : null);
    max.push(need.max ? await extremeGroups(totals, groupOf, span.from, count, 1, turns) : null);
  }
  const aligned: ExactSums[] = [];
  for (const totals of grouping.aligned ?? []) aligned.push(await sumGroups(totals, groupOf, span.from, count, turns));

  const codes = new Int32Array(count * width);
  await inSlices(
    count,
    (start, end) => {
      for (let g = start; g < end; g++)
        for (let i = 0; i < width; i++) codes[g * width + i] = Math.floor(keys[g]! / radix[i]!) % sizes[groupBy[i]!]!;
    },
    turns,
  );
  return { count, groupBy, codes, rows, sums, min, max, needs: metrics, aligned };
}

/** Each group's exact sum of `totals`; `groupOf[i]` is the group of row `first + i`. */
async function sumGroups(totals: MetricTotals, groupOf: Int32Array, first: number, count: number, turns: Turns): Promise<ExactSums> {
  const sums = new ExactSums(count, totals.scale);
  await inSlices(
    groupOf.length,
    (start, end) => {
      if ('values' in totals && totals.scale !== null) {
        const { values, scale } = totals;
        const power = powerOfTen(scale);
        for (let i = start; i < end; i++) {
          const g = groupOf[i]!;
          if (g < 0) continue;
          const x = values[first + i]!;
          if (scalesExactly(x, power)) sums.add(g, scaled(x, power));
          else for (const part of writtenUnits(x, scale)) sums.add(g, part);
        }
      } else if ('values' in totals) {
        const { values } = totals;
        for (let i = start; i < end; i++) if (groupOf[i]! >= 0) sums.add(groupOf[i]!, values[first + i]!);
      } else {
        const { offsets, partials } = totals;
        for (let i = start; i < end; i++) {
          const g = groupOf[i]!;
          if (g >= 0) for (let p = offsets[first + i]!; p < offsets[first + i + 1]!; p++) sums.add(g, partials[p]!);
        }
      }
    },
    turns,
  );
  return sums;
}

/** Each group's minimum (`sign` -1) or maximum (1), rows numbered as sumGroups'. */
async function extremeGroups(
  totals: MetricTotals,
  groupOf: Int32Array,
  first: number,
  count: number,
  sign: 1 | -1,
  turns: Turns,
): Promise<Float64Array> {
  const out = new Float64Array(count).fill(-sign * Infinity);
  const values = 'values' in totals ? totals.values : sign > 0 ? totals.max : totals.min;
  await inSlices(
    groupOf.length,
    (start, end) => {
      for (let i = start; i < end; i++) {
        const g = groupOf[i]!;
        if (g >= 0 && sign * (values[first + i]! - out[g]!) > 0) out[g] = values[first + i]!;
      }
    },
    turns,
  );
  return out;
}

interface KeyIndex {
  /** The group of `key`, or `next` (recorded as its group) when the key is new. */
  find(key: number, next: number): number;
}

class DenseIndex implements KeyIndex {
  private readonly groups: Int32Array;
  constructor(keySpace: number) {
    this.groups = new Int32Array(keySpace).fill(-1);
  }
  find(key: number, next: number): number {
    const g = this.groups[key]!;
    if (g >= 0) return g;
    this.groups[key] = next;
    return next;
  }
}

class MapIndex implements KeyIndex {
  private readonly groups = new Map<number, number>();
  find(key: number, next: number): number {
    const g = this.groups.get(key);
    if (g !== undefined) return g;
    this.groups.set(key, next);
    return next;
  }
}

/**
 * `groups` added up over their first `keep` dimensions, and the merged group each
 * one went to (-1: left out by `include`). With `pad` the merged groups keep every
 * dimension, the others rolled up (-1); without it they have the first `keep` only.
 * `sizes` is every dimension's dictionary size (Grouping's). In slices, as `group`.
 */
export async function mergeGroups(
  groups: Groups,
  keep: number,
  sizes: readonly number[],
  include: (g: number) => boolean,
  pad: boolean,
  turns: Turns,
): Promise<{ groups: Groups; targetOf: Int32Array }> {
  const width = groups.groupBy.length;
  const kept = groups.groupBy.slice(0, keep).map((d) => sizes[d]!);
  const radix = kept.map((_, i) => kept.slice(i + 1).reduce((product, size) => product * size, 1));
  const keySpace = groupKeySpace(kept);
  const index = keySpace <= DENSE_KEYS ? new DenseIndex(keySpace) : new MapIndex();
  const firstOf: number[] = [];
  const targetOf = new Int32Array(groups.count).fill(-1);
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        if (!include(g)) continue;
        let key = 0;
        for (let i = 0; i < keep; i++) key += groups.codes[g * width + i]! * radix[i]!;
        const t = index.find(key, firstOf.length);
        if (t === firstOf.length) firstOf.push(g);
        targetOf[g] = t;
      }
    },
    turns,
  );
  const count = firstOf.length;
  const outWidth = pad ? width : keep;
  const codes = new Int32Array(count * outWidth).fill(-1);
  const rows = new Float64Array(count);
  const sums = groups.sums.map((s) => s?.like(count) ?? null);
  const min = groups.min.map((a) => a && new Float64Array(count).fill(Infinity));
  const max = groups.max.map((a) => a && new Float64Array(count).fill(-Infinity));
  const aligned = groups.aligned.map((s) => s.like(count));
  await inSlices(
    count,
    (start, end) => {
      for (let t = start; t < end; t++) codes.set(groups.codes.subarray(firstOf[t]! * width, firstOf[t]! * width + keep), t * outWidth);
    },
    turns,
  );
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        const t = targetOf[g]!;
        if (t < 0) continue;
        rows[t] = rows[t]! + groups.rows[g]!;
        for (let m = 0; m < sums.length; m++) {
          sums[m]?.addGroup(t, groups.sums[m]!, g);
          if (min[m]) min[m]![t] = Math.min(min[m]![t]!, groups.min[m]![g]!);
          if (max[m]) max[m]![t] = Math.max(max[m]![t]!, groups.max[m]![g]!);
        }
        for (let m = 0; m < aligned.length; m++) aligned[m]!.addGroup(t, groups.aligned[m]!, g);
      }
    },
    turns,
  );
  const groupBy = pad ? groups.groupBy : groups.groupBy.slice(0, keep);
  return { groups: { count, groupBy, codes, rows, sums, min, max, needs: groups.needs, aligned }, targetOf };
}
