import type { DatasetDef } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import type { MetricNeeds } from '../store/aggregation.ts';
import { inSlices, Turns } from '../store/slices.ts';
import { type Allowed, allowedCodes, groupDetail, groupRows, type Level, levelsOf, withPriorYears } from './aggregate-groups.ts';
import { type FlatGroups, filterAndSort } from './aggregate-order.ts';
import type { AggregatePlan } from './aggregate-plan.ts';
import {
  type Compared,
  compareValues,
  type MeasureSource,
  measureText,
  measureValue,
  perValue,
  priorGroups,
  shareTotals,
  shareValue,
  type Unmatched,
} from './derived.ts';
import type { YearRange } from './filters.ts';
import { denominatorOf } from './per-denominator.ts';
import { isSeriesKind, latestKept, type SeriesLookups, seriesLookups, seriesText, seriesValue, widen, withYears } from './series.ts';

// An aggregate's result (its plan is src/query/aggregate-plan.ts): every group with
// its derived measures, filtered by `having`, sorted, kept whole so that pages are
// slices of it.

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
 * Runs `plan` over the table that can answer it reading fewest rows, then its derived
 * measures, `having` and order, in slices that stop at the next one once `signal` aborts.
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
  const index = (dimension: string) => def.dimensions.indexOf(dimension);
  const groupBy = plan.groupBy.map(index);
  const { compare, share, per, having } = plan.derived;
  const allowed = allowedCodes(def, tables, plan.filters, period);
  const { series } = plan;
  const yearRead = compare ? withPriorYears(def, tables, allowed) : allowed;
  // The index's base year is read even where the filters leave it out, as compare's prior years are, and shown only if they allow it.
  const read = series.index === undefined ? yearRead : withYears(def, tables, yearRead, [series.index]);
  const metrics = [...new Set(plan.measures.map((m) => def.metrics.indexOf(m.metric)))];
  const needs: MetricNeeds[] = metrics.map((m) => {
    const fns = plan.measures.filter((measure) => def.metrics.indexOf(measure.metric) === m).map((measure) => measure.fn);
    return { index: m, sum: fns.includes('sum') || fns.includes('avg'), min: fns.includes('min'), max: fns.includes('max') };
  });
  const sources: MeasureSource[] = plan.measures.map((m) => ({ fn: m.fn, position: metrics.indexOf(def.metrics.indexOf(m.metric)) }));

  const denominator = per && (await denominatorOf(def, tables, tablesOf(per.dataset), per, groupBy, read));
  const scan = await groupDetail(tables, groupBy, denominator?.fineDims ?? [], read, needs, denominator?.aligned, turns);
  const hidden = read !== allowed ? allowed.get(index('year')) : undefined;
  const levels = await levelsOf(def, tables, scan.groups, plan.rollup, hidden, turns);
  const detail = levels[0]!;
  // latest leaves groups out of the answer only: every derived value is of the groups the filters keep, as before having.
  const latest = series.latest === undefined ? undefined : await latestKept(def, tables, detail, series.latest, turns);
  const count = levels.reduce((sum, level) => sum + level.shown.reduce((n, s) => n + s, 0), 0) - (latest?.cut ?? 0);
  const lookups: SeriesLookups = await seriesLookups(def, tables, series, levels, { groupBy, allowed, needs, rollup: plan.rollup }, turns);

  const matched = denominator?.match(scan.scanned, scan.targetOf, detail);
  const denominators = matched && levels.map((level) => matched.level(level));
  const shares = share !== undefined ? await shareTotalsOf(def, tables, plan, detail, allowed, sources, turns) : undefined;

  const columns = plan.columns;
  const n = columns.length;
  const width = groupBy.length;
  const codes = new Int32Array(count * width);
  const values = new Float64Array(count * n);
  const exact = new Map<number, string>();
  const rows = new Float64Array(count);
  let at = 0;
  for (const [l, level] of levels.entries()) {
    const { groups } = level;
    const priors = compare ? await priorGroups(def, tables, level, turns) : undefined;
    await inSlices(
      groups.count,
      (start, end) => {
        for (let g = start; g < end; g++) {
          if (!level.shown[g] || (latest && l === 0 && !latest.kept[g])) continue;
          codes.set(groups.codes.subarray(g * width, (g + 1) * width), at * width);
          rows[at] = groups.rows[g]!;
          let compared: Compared | undefined;
          columns.forEach((column, c) => {
            const source = sources[column.measure]!;
            let value: number;
            let text: string | undefined;
            if (column.kind === 'value') {
              value = measureValue(groups, source, g);
              text = measureText(groups, source, g);
            } else if (column.kind === 'share') value = shareValue(groups, source.position, g, shares!);
            else if (column.kind === 'per') value = perValue(groups, source.position, g, denominators![l]!);
            else if (isSeriesKind(column.kind)) {
              value = seriesValue(column.kind, lookups, l, groups, source.position, g);
              text = seriesText(column.kind, lookups, l, source.position, g);
            } else {
              if (column.kind === 'prev') compared = compareValues(groups, source, g, priors![g]!);
              const i = column.kind === 'prev' ? 0 : column.kind === 'change' ? 1 : 2;
              value = compared!.values[i];
              text = compared!.texts[i];
            }
            values[at * n + c] = value;
            if (text !== undefined && Number.isFinite(value)) exact.set(at * n + c, text);
          });
          at++;
        }
      },
      turns,
    );
  }
  const keys = columns.map((c) => c.key);
  const long: FlatGroups = { count, codes, width, dimensions: plan.groupBy, values, exact, n, keys, rows };
  const yearOf = (code: number) => Number(tables.dictionaries[index('year')]!.values[code]);
  const wide = series.shape === 'wide' ? await widen(long, yearOf, turns) : undefined;
  const sorted = await filterAndSort(wide?.groups ?? long, having, plan.order, turns);
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

/**
 * What shares divide by. The share dimension's own filter does not narrow its
 * denominator (every value of it counts), so when that dimension is filtered the rows
 * are grouped again without it. As in a rollup, a total over `state` adds the
 * national rows alone.
 */
async function shareTotalsOf(
  def: DatasetDef,
  tables: AggregateTables,
  plan: AggregatePlan,
  detail: Level,
  allowed: Allowed,
  sources: readonly MeasureSource[],
  turns: Turns,
) {
  const share = plan.derived.share!;
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
