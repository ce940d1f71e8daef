import type { DatasetDef } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import type { Groups, MetricNeeds } from '../store/aggregation.ts';
import { difference, type ExactSums, sumValue } from '../store/exact-sum.ts';
import { inSlices, type Turns } from '../store/slices.ts';
import { type Allowed, groupRows, type Level, levelsOf } from './aggregate-groups.ts';
import type { FlatGroups } from './aggregate-order.ts';
import type { Span as Cagr } from './options/series.ts';

// The values of the time-series parameters (series-plan.ts), from the exact sums:
// a group's index to the same group in a base year, its sums in the two years of a
// CAGR and the growth between them, the latest years of each group, and the wide
// shape. Years are found by value, never by position. NaN stands for null.

/** The code of `year` in the year dictionary, or -1 where the release has no such year. */
export function yearCode(def: DatasetDef, tables: AggregateTables, year: number): number {
  return tables.dictionaries[def.dimensions.indexOf('year')]!.values.findIndex((value) => Number(value) === year);
}

/** `allowed` with `years` added to the years it allows (when it filters years at all), as compare adds the prior years. */
export function withYears(def: DatasetDef, tables: AggregateTables, allowed: Allowed, years: readonly number[]): Allowed {
  const y = def.dimensions.indexOf('year');
  const filtered = allowed.get(y);
  if (!filtered) return allowed;
  const codes = years.map((year) => yearCode(def, tables, year)).filter((code) => code >= 0);
  return new Map([...allowed, [y, new Set([...filtered, ...codes])]]);
}

/** Group `g`'s codes as text with the one at `skip` left out (-1: none). */
function keyOf(groups: Groups, g: number, skip: number): string {
  const width = groups.groupBy.length;
  let key = '';
  for (let i = 0; i < width; i++) if (i !== skip) key += `${groups.codes[g * width + i]},`;
  return key;
}

/**
 * For each group of `level`: the group with the same values but the year `code`, or -1
 * (also where the level has rolled the year up, or the release lacks that year).
 */
export async function groupsInYear(def: DatasetDef, level: Level, code: number, turns: Turns): Promise<Int32Array> {
  const { groups } = level;
  const width = groups.groupBy.length;
  const at = groups.groupBy.indexOf(def.dimensions.indexOf('year'));
  const found = new Int32Array(groups.count).fill(-1);
  if (at < 0 || code < 0) return found;
  const index = new Map<string, number>();
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) if (groups.codes[g * width + at] === code) index.set(keyOf(groups, g, at), g);
    },
    turns,
  );
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) if (groups.codes[g * width + at]! >= 0) found[g] = index.get(keyOf(groups, g, at)) ?? -1;
    },
    turns,
  );
  return found;
}

/** For each group of `level`, the group of `other` (grouped alike) holding the same values, or -1. */
async function sameGroups(level: Level, other: Level, turns: Turns): Promise<Int32Array> {
  const index = new Map<string, number>();
  await inSlices(
    other.groups.count,
    (start, end) => {
      for (let h = start; h < end; h++) index.set(keyOf(other.groups, h, -1), h);
    },
    turns,
  );
  const found = new Int32Array(level.groups.count).fill(-1);
  await inSlices(
    level.groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) if (level.shown[g]) found[g] = index.get(keyOf(level.groups, g, -1)) ?? -1;
    },
    turns,
  );
  return found;
}

/**
 * Group `g`'s index for the sums `sums` (`bases`: each group's group in the base year,
 * or -1): one division of two correctly rounded sums, times 100 after it, so the base
 * year is exactly 100. Null where the base year is missing or sums to zero.
 */
export function indexValue(sums: ExactSums, bases: Int32Array, g: number): number {
  const b = bases[g]!;
  if (b < 0) return NaN;
  const base = sums.rounded(b);
  return base === 0 || !Number.isFinite(base) ? NaN : (sums.rounded(g) / base) * 100;
}

/** One CAGR year's groups at one level of the answer, and where each of the level's groups is among them (-1: none). */
export interface YearGroups {
  readonly groups: Groups;
  readonly at: Int32Array;
}

/** The two years of a CAGR at one level, and the years between them. */
export interface Span {
  readonly from: YearGroups;
  readonly to: YearGroups;
  readonly years: number;
}

/**
 * The CAGR years' groups, for each level its span. The two years are grouped apart,
 * each with the request's filters but its own year (read whatever the year and period
 * filters say), by the same levels as the answer, so a subtotal's growth is its own sums'.
 */
export async function cagrYears(
  def: DatasetDef,
  tables: AggregateTables,
  cagr: Cagr,
  scan: {
    readonly groupBy: readonly number[];
    readonly allowed: Allowed;
    readonly needs: readonly MetricNeeds[];
    readonly rollup: boolean;
  },
  turns: Turns,
): Promise<(level: Level, l: number) => Promise<Span>> {
  const y = def.dimensions.indexOf('year');
  const inYear = async (year: number) => {
    const allowed = new Map([...scan.allowed, [y, new Set([yearCode(def, tables, year)].filter((code) => code >= 0))]]);
    const grouped = await groupRows(tables, scan.groupBy, allowed, scan.needs, undefined, turns);
    return levelsOf(def, tables, grouped, scan.rollup, undefined, turns);
  };
  const from = await inYear(cagr.from);
  const to = await inYear(cagr.to);
  const side = async (level: Level, year: Level): Promise<YearGroups> => ({
    groups: year.groups,
    at: await sameGroups(level, year, turns),
  });
  return async (level, l) => ({ from: await side(level, from[l]!), to: await side(level, to[l]!), years: cagr.to - cagr.from });
}

/** Group `g`'s sum at `position` in one CAGR year, or NaN where it has no group there. */
export function yearSum(side: YearGroups, position: number, g: number): number {
  const at = side.at[g]!;
  return at < 0 ? NaN : side.groups.sums[position]!.rounded(at);
}

/** The exact decimal of yearSum where its double prints other digits (ExactSums.text). */
export function yearText(side: YearGroups, position: number, g: number): string | undefined {
  const at = side.at[g]!;
  return at < 0 ? undefined : side.groups.sums[position]!.text(at);
}

/**
 * Group `g`'s compound annual growth over `span` for the sums at `position`: the exact
 * change over the span as a fraction of the first year's sum, then
 * `expm1(log1p(x) ÷ years)`, the same value as `(to ÷ from)^(1 ÷ years) − 1` without
 * losing digits when the growth is small. Null where a year is missing, where `from`
 * ≤ 0 or the last year is below zero (no real root).
 */
export function cagrValue(span: Span, position: number, g: number): number {
  const f = span.from.at[g]!;
  const t = span.to.at[g]!;
  if (f < 0 || t < 0) return NaN;
  const fromSums = span.from.groups.sums[position]!;
  const toSums = span.to.groups.sums[position]!;
  const first = fromSums.rounded(f);
  if (!(first > 0) || !Number.isFinite(first)) return NaN;
  const growth = sumValue(difference(toSums.partialsOf(t), fromSums.partialsOf(f)), toSums.scale) / first;
  const rate = Math.expm1(Math.log1p(growth) / span.years);
  return Number.isFinite(rate) ? rate : NaN;
}

/**
 * `latest=n`: which shown groups of the detail level to keep, the `n` most recent
 * years of each group of the other dimensions, and how many groups it leaves out.
 */
export async function latestKept(def: DatasetDef, tables: AggregateTables, detail: Level, n: number, turns: Turns) {
  const { groups } = detail;
  const width = groups.groupBy.length;
  const at = groups.groupBy.indexOf(def.dimensions.indexOf('year'));
  const years = tables.dictionaries[def.dimensions.indexOf('year')]!.values.map(Number);
  const series = new Map<string, number[]>();
  await inSlices(
    groups.count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        if (!detail.shown[g]) continue;
        const key = keyOf(groups, g, at);
        const list = series.get(key);
        if (list) list.push(g);
        else series.set(key, [g]);
      }
    },
    turns,
  );
  const kept = new Uint8Array(groups.count);
  let cut = 0;
  const year = (g: number) => years[groups.codes[g * width + at]!]!;
  for (const list of series.values()) {
    list.sort((a, b) => year(b) - year(a));
    for (let i = 0; i < list.length; i++) {
      if (i < n) kept[list[i]!] = 1;
      else cut++;
    }
    await turns.turn();
  }
  return { kept, cut };
}

/**
 * The long groups pivoted to one row per group of the other dimensions: each value
 * key becomes one column per year, `<key>_<year>`, years ascending within each key;
 * a year the group has no row for is null. `rows` adds up the group's years.
 */
export async function widen(
  flat: FlatGroups,
  yearOf: (code: number) => number,
  turns: Turns,
): Promise<{ groups: FlatGroups; years: number[] }> {
  const { count, width, n } = flat;
  const at = flat.dimensions.indexOf('year');
  const codes = [...new Set(Array.from({ length: count }, (_, g) => flat.codes[g * width + at]!))].sort((a, b) => a - b);
  const column = new Map(codes.map((code, i) => [code, i]));
  const years = codes.map(yearOf);
  const wideWidth = width - 1;
  const rowOf = new Map<string, number>();
  const owner: number[] = [];
  const target = new Int32Array(count);
  await inSlices(
    count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        let key = '';
        for (let i = 0; i < width; i++) if (i !== at) key += `${flat.codes[g * width + i]},`;
        let row = rowOf.get(key);
        if (row === undefined) {
          row = owner.length;
          rowOf.set(key, row);
          owner.push(g);
        }
        target[g] = row;
      }
    },
    turns,
  );
  const rowsCount = owner.length;
  const wideN = n * years.length;
  const wideCodes = new Int32Array(rowsCount * wideWidth);
  owner.forEach((g, row) => {
    for (let i = 0, j = 0; i < width; i++) if (i !== at) wideCodes[row * wideWidth + j++] = flat.codes[g * width + i]!;
  });
  const values = new Float64Array(rowsCount * wideN).fill(NaN);
  const exact = new Map<number, string>();
  const rows = new Float64Array(rowsCount);
  await inSlices(
    count,
    (start, end) => {
      for (let g = start; g < end; g++) {
        const row = target[g]!;
        const y = column.get(flat.codes[g * width + at]!)!;
        for (let k = 0; k < n; k++) {
          values[row * wideN + k * years.length + y] = flat.values[g * n + k]!;
          const text = flat.exact.get(g * n + k);
          if (text !== undefined) exact.set(row * wideN + k * years.length + y, text);
        }
        rows[row] = rows[row]! + flat.rows[g]!;
      }
    },
    turns,
  );
  const keys = flat.keys.flatMap((key) => years.map((year) => `${key}_${year}`));
  const dimensions = flat.dimensions.filter((_, i) => i !== at);
  return { groups: { count: rowsCount, codes: wideCodes, width: wideWidth, values, exact, n: wideN, rows, dimensions, keys }, years };
}
