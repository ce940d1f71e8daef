import type { DatasetDef } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import { inSlices, Turns } from '../store/slices.ts';
import { allowedCodes, groupDetail, levelsOf, measureNeeds } from './aggregate-groups.ts';
import { type FlatGroups, filterAndSort } from './aggregate-order.ts';
import type { AggregatePlan } from './aggregate-plan.ts';
import { columnCells, columnReads } from './column-kinds.ts';
import type { Unmatched } from './derived.ts';
import type { YearRange } from './filters.ts';
import { denominatorOf } from './per-denominator.ts';
import { latestKept, widen } from './series.ts';

// An aggregate's result (its plan is src/query/aggregate-plan.ts): every group with
// the values of its columns, each computed as its kind says (column-kinds.ts),
// filtered by `having`, sorted, kept whole so that pages are slices of it.

/** Every group of an aggregate, in answer order. */
export interface AggregateResult {
  readonly count: number;
  /** Dictionary codes of each group, `width` per group; -1 where a rollup row totals a dimension. */
  readonly codes: Int32Array;
  readonly width: number;
  /** Each group's values, one per column of the plan; NaN where there is none (null). */
  readonly values: Float64Array;
  /** By index into `values`: the exact decimal of a sum whose double prints other digits (beyond 2^52 units). */
  readonly exact: ReadonlyMap<number, string>;
  /** Served rows in each group. */
  readonly rows: Float64Array;
  /** With `per`: the numerator keys that have no denominator row. */
  readonly unmatched?: Unmatched;
  /** With `latest`: the groups (a group's year) it left out. */
  readonly cut?: number;
  /** With `shape=wide`: the value keys (`ggr_sum_2024`…) and the years they span; `width` then leaves year out. */
  readonly wide?: { readonly keys: readonly string[]; readonly years: readonly number[] };
}

export const resultBytes = (result: AggregateResult) =>
  result.codes.byteLength +
  result.values.byteLength +
  result.rows.byteLength +
  result.exact.size * 96 +
  64 +
  (result.unmatched ? 1024 : 0) +
  (result.wide ? 32 * result.wide.keys.length : 0);

/** The aggregate tables of another dataset of the same release (a `per` denominator's). */
export type TablesOf = (dataset: string) => AggregateTables;

/**
 * Runs `plan` over the table that can answer it reading fewest rows, then its columns,
 * `having` and order, in slices that stop at the next one once `signal` aborts.
 */
export async function computeAggregate(
  def: DatasetDef,
  tables: AggregateTables,
  plan: AggregatePlan,
  period: YearRange | undefined,
  tablesOf: TablesOf,
  signal: AbortSignal,
): Promise<AggregateResult> {
  const turns = new Turns(signal);
  const year = def.dimensions.indexOf('year');
  const groupBy = plan.groupBy.map((d) => def.dimensions.indexOf(d));
  const allowed = allowedCodes(def, tables, plan.filters, period);
  const read = columnReads(plan.columns, def, tables, plan, allowed);
  const { needs, sources } = measureNeeds(def, plan.measures);
  const per = plan.per;
  const denominator = per && (await denominatorOf(def, tables, tablesOf(per.dataset), per, groupBy, read));
  const scan = await groupDetail(tables, groupBy, denominator?.fineDims ?? [], read, needs, denominator?.aligned, turns);
  // The years read for the columns alone (compare's prior years, index's base year) are grouped but not shown.
  const levels = await levelsOf(def, tables, scan.groups, plan.values.rollup, read !== allowed ? allowed.get(year) : undefined, turns);
  const detail = levels[0]!;
  // latest leaves groups out of the answer only: every derived value is of the groups the filters keep, as before having.
  const latest = plan.values.latest === undefined ? undefined : await latestKept(def, tables, detail, plan.values.latest, turns);
  const count = levels.reduce((sum, level) => sum + level.shown.reduce((n, s) => n + s, 0), 0) - (latest?.cut ?? 0);
  const matched = denominator?.match(scan.scanned, scan.targetOf, detail);
  const cellsOf = await columnCells(plan.columns, { def, tables, plan, groupBy, allowed, needs, sources, levels, per: matched, turns });

  const n = plan.columns.length;
  const width = groupBy.length;
  const codes = new Int32Array(count * width);
  const values = new Float64Array(count * n);
  const exact = new Map<number, string>();
  const rows = new Float64Array(count);
  let at = 0;
  for (const [l, level] of levels.entries()) {
    const { groups, shown } = level;
    const kept = l === 0 ? latest?.kept : undefined;
    const cells = await cellsOf(level, l);
    await inSlices(
      groups.count,
      (start, end) => {
        for (let g = start; g < end; g++) {
          if (!shown[g] || (kept && !kept[g])) continue;
          for (let i = 0; i < width; i++) codes[at * width + i] = groups.codes[g * width + i]!;
          rows[at] = groups.rows[g]!;
          for (let c = 0; c < n; c++) {
            const cell = cells[c]!;
            const value = cell.value(g);
            values[at * n + c] = value;
            const text = cell.text && Number.isFinite(value) ? cell.text(g) : undefined;
            if (text !== undefined) exact.set(at * n + c, text);
          }
          at++;
        }
      },
      turns,
    );
  }
  const keys = plan.columns.map((c) => c.key);
  const long: FlatGroups = { count, codes, width, dimensions: plan.groupBy, values, exact, n, keys, rows };
  const yearOf = (code: number) => Number(tables.dictionaries[year]!.values[code]);
  const wide = plan.values.shape === 'wide' ? await widen(long, yearOf, turns) : undefined;
  const sorted = await filterAndSort(wide?.groups ?? long, plan.values.having, plan.values.order, turns);
  return {
    count: sorted.count,
    codes: sorted.codes,
    width: sorted.width,
    values: sorted.values,
    exact: sorted.exact,
    rows: sorted.rows,
    ...(matched && { unmatched: matched.unmatched }),
    ...(latest && { cut: latest.cut }),
    ...(wide && { wide: { keys: wide.groups.keys, years: wide.years } }),
  };
}
