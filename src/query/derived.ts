import type { DatasetDef } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import type { Groups } from '../store/aggregation.ts';
import type { DenominatorTable } from '../store/denominators.ts';
import { difference, type ExactSums, sumText, sumValue } from '../store/exact-sum.ts';
import { inSlices, type Turns } from '../store/slices.ts';
import { type Allowed, groupRows, type Level } from './aggregate-groups.ts';
import type { AggregatePlan } from './aggregate-plan.ts';

// The derived values of an aggregate's groups, from their exact sums: a year's
// predecessor found by year (compare), a group's sum over its total (share), and a
// group's sum over another dataset's sum for the keys of its rows (per). Each ratio
// is one division of two correctly rounded sums; a change is the difference of two
// exact sums, rounded once. NaN stands for null. A sum or change the double nearest
// it would print with other digits also has its exact decimal text (ExactSums.text).

/** Where a measure's value comes from in a level's groups. */
export interface MeasureSource {
  readonly fn: 'sum' | 'avg' | 'min' | 'max';
  /** Position of its metric among the metrics the scan totalled. */
  readonly position: number;
}

export function measureValue(groups: Groups, m: MeasureSource, g: number): number {
  if (m.fn === 'min') return groups.min[m.position]![g]!;
  if (m.fn === 'max') return groups.max[m.position]![g]!;
  const sum = groups.sums[m.position]!.rounded(g);
  return m.fn === 'sum' ? sum : sum / groups.rows[g]!;
}

const divide = (numerator: number, denominator: number) =>
  denominator === 0 || !Number.isFinite(denominator) ? NaN : numerator / denominator;

/** For each group of `level`: the group holding the same values one year earlier, or -1. */
export async function priorGroups(def: DatasetDef, tables: AggregateTables, level: Level, turns: Turns): Promise<Int32Array> {
  const { groups } = level;
  const width = groups.groupBy.length;
  const y = def.dimensions.indexOf('year');
  const at = groups.groupBy.indexOf(y);
  const years = tables.dictionaries[y]!.values.map(Number);
  const prior = new Int32Array(groups.count).fill(-1);
  if (at < 0) return prior;
  // Each group by its values with the year written as a number, so year - 1 is found by value, not by position.
  const keyOf = (g: number, year: number) => {
    const codes = Array.from(groups.codes.subarray(g * width, (g + 1) * width));
    codes[at] = year;
    return codes.join(',');
  };
  const index = new Map<string, number>();
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        const code = groups.codes[g * width + at]!;
        if (code >= 0) index.set(keyOf(g, years[code]!), g);
      }
    },
    turns,
  );
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        const code = groups.codes[g * width + at]!;
        if (code >= 0) prior[g] = index.get(keyOf(g, years[code]! - 1)) ?? -1;
      }
    },
    turns,
  );
  return prior;
}

/**
 * One level's groups set against their prior years (`priors`: each group's
 * predecessor, or -1): prev, the change, and the change as a fraction of prev, with
 * the exact decimals of prev and the change. It keeps the comparison of the group and
 * measure last asked for, so a measure's three keys compute it once between them, and
 * one object serves every group of the level.
 */
export class Comparison {
  prev = NaN;
  change = NaN;
  pctChange = NaN;
  prevText: string | undefined;
  changeText: string | undefined;
  private g = -1;
  private m: MeasureSource | undefined;

  constructor(
    private readonly groups: Groups,
    private readonly priors: Int32Array,
  ) {}

  of(m: MeasureSource, g: number): this {
    if (g === this.g && m === this.m) return this;
    this.g = g;
    this.m = m;
    this.prevText = undefined;
    this.changeText = undefined;
    const p = this.priors[g]!;
    if (p < 0) {
      this.prev = this.change = this.pctChange = NaN;
      return this;
    }
    const prev = measureValue(this.groups, m, p);
    this.prev = prev;
    if (m.fn !== 'sum') {
      this.change = measureValue(this.groups, m, g) - prev;
      this.pctChange = divide(this.change, prev);
      return this;
    }
    const sums = this.groups.sums[m.position]!;
    const partials = difference(sums.partialsOf(g), sums.partialsOf(p));
    this.change = sumValue(partials, sums.scale);
    // this ÷ prev − 1, as change ÷ prev: one division, of the exact change; a fraction, as shares and ratios are.
    this.pctChange = divide(this.change, prev);
    this.prevText = sums.text(p);
    this.changeText = sumText(partials, sums.scale);
    return this;
  }
}

/** Share denominators: each group's total and where it sits, for the measures given. */
export interface ShareTotals {
  /** For each shown group of the detail level, its total's index (-1: none). */
  readonly of: Int32Array;
  /** Per measure position: each total's exact sum. */
  readonly sums: ReadonlyMap<number, ExactSums>;
}

/** Groups' codes as text with the dimension at `skip` left out (-1: none). */
const codesKey = (codes: Int32Array, width: number, g: number, skip: number) => {
  const parts: number[] = [];
  for (let i = 0; i < width; i++) if (i !== skip) parts.push(codes[g * width + i]!);
  return parts.join(',');
};

/**
 * The totals shares divide by. With `totals` (the rows grouped by every group_by
 * dimension but the share's, that dimension's filter dropped) each detail group
 * divides by the total holding its other values; without it, by the sum of the shown
 * groups holding them (`skip` -1: of every shown group, the grand total) that
 * `include` accepts.
 */
function shareTotals(
  detail: Level,
  positions: readonly number[],
  skip: number,
  totals: Groups | undefined,
  include: (g: number) => boolean = () => true,
): ShareTotals {
  const { groups } = detail;
  const width = groups.groupBy.length;
  const of = new Int32Array(groups.count).fill(-1);
  const sums = new Map<number, ExactSums>();
  if (totals) {
    const index = new Map<string, number>();
    for (let t = 0; t < totals.count; t++) index.set(codesKey(totals.codes, totals.groupBy.length, t, -1), t);
    for (let g = 0; g < groups.count; g++) if (detail.shown[g]) of[g] = index.get(codesKey(groups.codes, width, g, skip)) ?? -1;
    for (const p of positions) sums.set(p, totals.sums[p]!);
    return { of, sums };
  }
  const index = new Map<string, number>();
  for (let g = 0; g < groups.count; g++) {
    if (!detail.shown[g]) continue;
    const key = skip < 0 ? '' : codesKey(groups.codes, width, g, skip);
    let t = index.get(key);
    if (t === undefined) {
      t = index.size;
      index.set(key, t);
    }
    of[g] = t;
  }
  for (const p of positions) {
    const total = groups.sums[p]!.like(index.size);
    for (let g = 0; g < groups.count; g++) if (of[g]! >= 0 && include(g)) total.addGroup(of[g]!, groups.sums[p]!, g);
    sums.set(p, total);
  }
  return { of, sums };
}

/**
 * What shares divide by. The share dimension's own filter does not narrow its
 * denominator (every value of it counts), so when that dimension is filtered the rows
 * are grouped again without it. As in a rollup, a total over `state` adds the
 * national rows alone.
 */
export async function shareTotalsOf(
  def: DatasetDef,
  tables: AggregateTables,
  plan: AggregatePlan,
  detail: Level,
  allowed: Allowed,
  sources: readonly MeasureSource[],
  turns: Turns,
): Promise<ShareTotals> {
  const share = plan.values.share!;
  const positions = [...new Set(sources.filter((s) => s.fn === 'sum').map((s) => s.position))];
  const skip = share === 'all' ? -1 : plan.groupBy.indexOf(share);
  const totals = def.totals;
  const rolledTotals = totals !== undefined && plan.groupBy.includes(totals.dimension) && (share === 'all' || share === totals.dimension);
  const totalsCode = totals && tables.codes.get(totals.dimension)?.get(totals.value);
  const shareIndex = def.dimensions.indexOf(share);
  if (skip < 0 || !allowed.has(shareIndex)) {
    const at = totals ? plan.groupBy.indexOf(totals.dimension) : -1;
    const include = (g: number) => !rolledTotals || detail.groups.codes[g * plan.groupBy.length + at] === totalsCode;
    return shareTotals(detail, positions, skip, undefined, include);
  }
  const without = new Map(allowed);
  without.delete(shareIndex);
  if (rolledTotals && totalsCode !== undefined) without.set(shareIndex, new Set([totalsCode]));
  const groupBy = plan.groupBy.filter((d) => d !== share).map((d) => def.dimensions.indexOf(d));
  const needs = positions.map((p) => ({
    index: def.metrics.indexOf(plan.measures[sources.findIndex((s) => s.position === p)]!.metric),
    sum: true,
    min: false,
    max: false,
  }));
  const grouped = await groupRows(tables, groupBy, without, needs, undefined, turns);
  // This scan totals the positions' metrics alone, in the positions' order.
  const remapped = {
    ...grouped,
    sums: Array.from({ length: Math.max(...positions) + 1 }, (_, p) =>
      positions.includes(p) ? grouped.sums[positions.indexOf(p)]! : null,
    ),
  };
  return shareTotals(detail, positions, skip, remapped);
}

export function shareValue(groups: Groups, position: number, g: number, totals: ShareTotals): number {
  const t = totals.of[g]!;
  return t < 0 ? NaN : divide(groups.sums[position]!.rounded(g), totals.sums.get(position)!.rounded(t));
}

/** Each group's denominator in one level: its exact sum, or null where a key of its rows has none. */
export interface LevelDenominators {
  readonly sums: ExactSums;
  /** 1 where some key of the group's rows has no denominator row. */
  readonly unmatched: Uint8Array;
}

export function perValue(groups: Groups, position: number, g: number, denominators: LevelDenominators): number {
  return denominators.unmatched[g] ? NaN : divide(groups.sums[position]!.rounded(g), denominators.sums.rounded(g));
}

/** The numerator keys a denominator has no row for. */
export interface Unmatched {
  readonly count: number;
  /** The first ten, in key order: each key dimension's value. */
  readonly keys: readonly Readonly<Record<string, string | number>>[];
}

/** How the rows of each fine group (group_by plus the key dimensions) match the denominator. */
export interface FineKeys {
  /** Each fine group's detail group. */
  readonly toDetail: Int32Array;
  /** Each fine group's key: its index in the denominator table, or table.count + n for the n-th key it lacks. */
  readonly key: Int32Array;
  /** Codes (the numerator's) of each key it lacks, in the order numbered. */
  readonly missing: readonly (readonly number[])[];
}

/**
 * Each fine group's key in `table`: `codesOf(f)` gives its key dimensions' codes in
 * the numerator's dictionaries, `translate` each dimension's code into the table's.
 */
export function matchKeys(
  fineCount: number,
  toDetail: Int32Array,
  codesOf: (f: number) => number[],
  translate: readonly Int32Array[],
  table: DenominatorTable,
): FineKeys {
  const key = new Int32Array(fineCount);
  const missing: number[][] = [];
  const missingIndex = new Map<string, number>();
  for (let f = 0; f < fineCount; f++) {
    const codes = codesOf(f);
    const found = table.find(codes.map((code, i) => translate[i]![code]!));
    if (found >= 0) {
      key[f] = found;
      continue;
    }
    const text = codes.join(',');
    let n = missingIndex.get(text);
    if (n === undefined) {
      n = missing.length;
      missingIndex.set(text, n);
      missing.push(codes);
    }
    key[f] = table.count + n;
  }
  return { toDetail, key, missing };
}

/** A level's denominators: for each of its groups, the sum over the distinct keys of its rows. */
export function levelDenominators(level: Level, fine: FineKeys, table: DenominatorTable): LevelDenominators {
  const count = level.groups.count;
  const sums = table.sums.like(count);
  const unmatched = new Uint8Array(count);
  const seen = new Set<number>();
  const keys = table.count + fine.missing.length;
  for (let f = 0; f < fine.key.length; f++) {
    const l = level.fromDetail[fine.toDetail[f]!]!;
    if (l < 0) continue;
    const k = fine.key[f]!;
    if (k >= table.count) {
      unmatched[l] = 1;
      continue;
    }
    // A key shared by several groups of the level below counts once here.
    const pair = l * keys + k;
    if (seen.has(pair)) continue;
    seen.add(pair);
    sums.addGroup(l, table.sums, k);
  }
  return { sums, unmatched };
}

/** The keys lacking a denominator among the shown detail groups' rows, counted, the first ten by value. */
export function unmatchedKeys(
  detail: Level,
  fine: FineKeys,
  tableCount: number,
  names: readonly string[],
  codeValue: (i: number, code: number) => string | number,
): Unmatched {
  const lacking = new Set<number>();
  for (let f = 0; f < fine.key.length; f++)
    if (fine.key[f]! >= tableCount && detail.shown[fine.toDetail[f]!]) lacking.add(fine.key[f]! - tableCount);
  const codes = [...lacking].map((n) => fine.missing[n]!);
  codes.sort((a, b) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  });
  return {
    count: codes.length,
    keys: codes.slice(0, 10).map((key) => Object.fromEntries(names.map((name, i) => [name, codeValue(i, key[i]!)]))),
  };
}
