import type { DatasetDef } from '../registry.ts';
import { type AggregateTables, chooseSource } from '../store/aggregate-tables.ts';
import { type AggregateSource, type Groups, group, type MetricNeeds, type MetricTotals, mergeGroups } from '../store/aggregation.ts';
import type { Turns } from '../store/slices.ts';
import type { MeasureSource } from './derived.ts';
import type { Filters, YearRange } from './filters.ts';
import type { Measure } from './options/aggregate-option.ts';

// Which rows an aggregate reads and how they become its groups: the filters as
// dictionary codes, the scan of the table that can answer reading fewest rows, and the levels of
// a rollup. Some column kinds have the scan read years the filters leave out
// (column-kinds.ts: compare's prior years, index's base year), whose groups are kept
// for their values but not shown.

/** Dimension index → the codes a row may hold there. */
export type Allowed = Map<number, Set<number>>;

/** The request's filters and period as codes of `tables`' dictionaries. */
export function allowedCodes(def: DatasetDef, tables: AggregateTables, filters: Filters, period: YearRange | undefined): Allowed {
  const allowed: Allowed = new Map();
  for (const [dimension, values] of filters) {
    const codes = tables.codes.get(dimension)!;
    allowed.set(def.dimensions.indexOf(dimension), new Set(values.flatMap((value) => codes.get(value) ?? [])));
  }
  if (period) {
    const y = def.dimensions.indexOf('year');
    const years = tables.dictionaries[y]!.values;
    const inRange = new Set(years.flatMap((year, code) => (Number(year) >= period.from && Number(year) <= period.to ? [code] : [])));
    const filtered = allowed.get(y);
    allowed.set(y, filtered ? new Set([...filtered].filter((code) => inRange.has(code))) : inRange);
  }
  return allowed;
}

/** `allowed` with every year's predecessor added to the years it allows (when it filters years at all). */
export function withPriorYears(def: DatasetDef, tables: AggregateTables, allowed: Allowed): Allowed {
  const y = def.dimensions.indexOf('year');
  const years = allowed.get(y);
  if (!years) return allowed;
  const values = tables.dictionaries[y]!.values;
  const codeOf = new Map(values.map((value, code) => [Number(value), code]));
  const read = new Set(years);
  for (const code of years) {
    const prior = codeOf.get(Number(values[code]) - 1);
    if (prior !== undefined) read.add(prior);
  }
  return new Map([...allowed, [y, read]]);
}

/**
 * The rows that pass `allowed` grouped by `groupBy` (dimension indexes), from the
 * table that keeps them with the fewest rows to read; `aligned` gives another dataset's totals lined up
 * with the table chosen, summed into the same groups.
 */
export async function groupRows(
  tables: AggregateTables,
  groupBy: readonly number[],
  allowed: Allowed,
  metrics: readonly MetricNeeds[],
  aligned: ((source: AggregateSource) => MetricTotals) | undefined,
  turns: Turns,
): Promise<Groups> {
  const { source, allowed: scanned } = chooseSource(tables.sources, groupBy, allowed);
  return group(source, { groupBy, sizes: tables.sizes, allowed: scanned, metrics, aligned: aligned ? [aligned(source)] : [], turns });
}

/** What the scan totals for `measures` (each metric once, with the totals its functions need), and where each measure reads its value. */
export function measureNeeds(def: DatasetDef, measures: readonly Measure[]): { needs: MetricNeeds[]; sources: MeasureSource[] } {
  const metrics = [...new Set(measures.map((m) => def.metrics.indexOf(m.metric)))];
  const needs = metrics.map((m) => {
    const fns = measures.filter((measure) => def.metrics.indexOf(measure.metric) === m).map((measure) => measure.fn);
    return { index: m, sum: fns.includes('sum') || fns.includes('avg'), min: fns.includes('min'), max: fns.includes('max') };
  });
  const sources = measures.map((m) => ({ fn: m.fn, position: metrics.indexOf(def.metrics.indexOf(m.metric)) }));
  return { needs, sources };
}

/**
 * The detail groups: the rows grouped by `groupBy` and then `fine` (the key dimensions
 * a `per` denominator is found by), those added up over groupBy; `scanned` are the
 * groups before, and `targetOf` where each one went.
 */
export async function groupDetail(
  tables: AggregateTables,
  groupBy: readonly number[],
  fine: readonly number[],
  allowed: Allowed,
  metrics: readonly MetricNeeds[],
  aligned: ((source: AggregateSource) => MetricTotals) | undefined,
  turns: Turns,
): Promise<{ scanned: Groups; groups: Groups; targetOf: Int32Array }> {
  const scanned = await groupRows(tables, [...groupBy, ...fine], allowed, metrics, aligned, turns);
  if (fine.length === 0) return { scanned, groups: scanned, targetOf: Int32Array.from({ length: scanned.count }, (_, g) => g) };
  const merged = await mergeGroups(scanned, groupBy.length, tables.sizes, () => true, false, turns);
  return { scanned, groups: merged.groups, targetOf: merged.targetOf };
}

/** One level of the answer: the groups, which of them are shown, and where each detail group went. */
export interface Level {
  readonly groups: Groups;
  /** 1 for a group of the answer; 0 for a prior year's group read only for the comparison. */
  readonly shown: Uint8Array;
  /** For each detail group, its group in this level (-1: not added up here). */
  readonly fromDetail: Int32Array;
}

/** One level of the answer: groups by the first `keep` dimensions of group_by. */
export interface LevelShape {
  readonly keep: number;
  /** It rolls up the totals dimension (state), so it adds up the total rows alone, as an aggregate without that dimension does. */
  readonly national: boolean;
}

/** The detail level, then with rollup one level per shorter prefix of group_by, down to the grand total. */
export function levelShapes(def: DatasetDef, groupBy: readonly string[], rollup: boolean): LevelShape[] {
  const position = def.totals ? groupBy.indexOf(def.totals.dimension) : -1;
  const shapes: LevelShape[] = [{ keep: groupBy.length, national: false }];
  if (rollup) for (let keep = groupBy.length - 1; keep >= 0; keep--) shapes.push({ keep, national: position >= keep });
  return shapes;
}

/**
 * The detail groups, then (with rollup) one level of subtotals per prefix of group_by,
 * longest first. National totals are never added to their own parts; a subtotal that
 * rolls up the year adds the years shown only.
 */
export async function levelsOf(
  def: DatasetDef,
  tables: AggregateTables,
  detail: Groups,
  rollup: boolean,
  shownYears: ReadonlySet<number> | undefined,
  turns: Turns,
): Promise<Level[]> {
  const width = detail.groupBy.length;
  const yearAt = detail.groupBy.indexOf(def.dimensions.indexOf('year'));
  const isShown = (groups: Groups, g: number) =>
    shownYears === undefined || yearAt < 0 || groups.codes[g * width + yearAt]! < 0 || shownYears.has(groups.codes[g * width + yearAt]!);
  const shownOf = (groups: Groups) => Uint8Array.from({ length: groups.count }, (_, g) => (isShown(groups, g) ? 1 : 0));
  const levels: Level[] = [{ groups: detail, shown: shownOf(detail), fromDetail: Int32Array.from({ length: detail.count }, (_, g) => g) }];
  const totalsAt = def.totals ? detail.groupBy.indexOf(def.dimensions.indexOf(def.totals.dimension)) : -1;
  const totalsCode = def.totals && tables.codes.get(def.totals.dimension)?.get(def.totals.value);
  const detailShown = levels[0]!.shown;
  for (const { keep, national } of levelShapes(
    def,
    detail.groupBy.map((d) => def.dimensions[d]!),
    rollup,
  ).slice(1)) {
    const yearRolled = yearAt >= keep;
    const include = (g: number) =>
      (!national || detail.codes[g * width + totalsAt] === totalsCode) && (!yearRolled || detailShown[g] === 1);
    const { groups, targetOf } = await mergeGroups(detail, keep, tables.sizes, include, true, turns);
    levels.push({ groups, shown: shownOf(groups), fromDetail: targetOf });
  }
  return levels;
}
