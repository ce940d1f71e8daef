import { InvalidGroupByError, InvalidMeasureError, InvalidOrderError, MixedTotalsError, MixedUnitsError, RateSumError, TooManyGroupsError } from '../errors.ts';
import { metricDef, type DatasetDef } from '../registry.ts';
import { group, subtotals, type Groups, type MetricNeeds } from '../store/aggregation.ts';
import { chooseSource, type AggregateTables } from '../store/aggregate-tables.ts';
import type { Filters, YearRange } from './filters.ts';

// An aggregate request as a plan (what to group, measure and order, after the
// registry's guards) and its result: every group, sorted, kept whole so that pages
// are slices of it.

export const FUNCTIONS = ['sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof FUNCTIONS)[number];

export const MAX_GROUP_BY = 6;

export interface Measure {
  readonly metric: string;
  readonly fn: AggregateFunction;
  /** `<metric>_<fn>`: the key in `values` and the CSV column. */
  readonly key: string;
}

export interface AggregatePlan {
  readonly groupBy: readonly string[];
  /** The request's filters, plus the totals rows' one when it neither groups nor filters by that dimension. */
  readonly filters: Filters;
  readonly measures: readonly Measure[];
  /** Default measures left out because they cannot be combined for this request, with why. */
  readonly omitted: readonly { readonly measure: string; readonly reason: string }[];
  readonly order: { readonly key: string; readonly descending: boolean } | undefined;
  readonly rollup: boolean;
}

export interface AggregateInput {
  readonly groupBy: readonly string[];
  /** As sent: `<metric>:<fn>` or `<metric>`; undefined for every metric with its default function. */
  readonly measures: readonly string[] | undefined;
  readonly order: string | undefined;
  readonly rollup: boolean;
  readonly filters: Filters;
}

export const defaultFunction = (metric: string): AggregateFunction => (metricDef(metric).kind === 'rate' ? 'avg' : 'sum');

/**
 * Why `fn` of `metric` cannot be computed for this grouping and these filters, or
 * undefined when it can: a rate has no meaningful sum, and values in different
 * units (currencies) must not meet in one total.
 */
function refusal(metric: string, fn: AggregateFunction, input: AggregateInput): MixedUnitsError | RateSumError | undefined {
  const def = metricDef(metric);
  if (fn === 'sum' && def.kind === 'rate') return new RateSumError(`Cannot sum ${metric}, a rate: use avg, min or max`);
  const unit = def.unitFrom;
  if (unit && !input.groupBy.includes(unit.dimension) && input.filters.get(unit.dimension)?.length !== 1) {
    return new MixedUnitsError(
      `Cannot combine ${metric} values in different ${unit.units}: filter ${unit.dimension} to one ${unit.one} or add ${unit.dimension} to group_by`,
    );
  }
  return undefined;
}

/**
 * The filters to aggregate with: rows that total others (national rows, state "")
 * and the rows they total are never added together. Without a filter or a grouping on
 * that dimension only the totals are read; a filter that mixes both is refused.
 */
function effectiveFilters(def: DatasetDef, input: AggregateInput): Filters {
  const totals = def.totals;
  if (!totals || input.groupBy.includes(totals.dimension)) return input.filters;
  const given = input.filters.get(totals.dimension);
  if (given === undefined) {
    const implied = new Map([...input.filters, [totals.dimension, [totals.value]]]);
    return new Map(def.dimensions.filter((d) => implied.has(d)).map((d) => [d, implied.get(d)!]));
  }
  if (given.includes(totals.value) && given.length > 1) {
    const shown = JSON.stringify(totals.value);
    throw new MixedTotalsError(
      `Cannot add ${totals.means} (${totals.dimension} ${shown}) to the rows they total: filter ${totals.dimension} to ${shown} alone or leave ${shown} out, or add ${totals.dimension} to group_by`,
    );
  }
  return input.filters;
}

/** Checks a request against the dataset and the registry's guards; throws the 400 to answer. */
export function planAggregate(def: DatasetDef, request: AggregateInput): AggregatePlan {
  for (const dimension of request.groupBy) {
    if (!def.dimensions.includes(dimension)) throw new InvalidGroupByError(dimension, def.name, def.dimensions);
  }
  const filters = effectiveFilters(def, request);
  const input = { ...request, filters };
  let measures: Measure[];
  const omitted: { measure: string; reason: string }[] = [];
  if (input.measures === undefined) {
    measures = [];
    for (const metric of def.metrics) {
      const fn = defaultFunction(metric);
      const refused = refusal(metric, fn, input);
      if (refused) omitted.push({ measure: `${metric}:${fn}`, reason: refused.body.error });
      else measures.push({ metric, fn, key: `${metric}_${fn}` });
    }
    // Nothing left to compute: the first reason is the fix to ask for.
    if (measures.length === 0) throw refusal(def.metrics[0]!, defaultFunction(def.metrics[0]!), input)!;
  } else {
    measures = [];
    for (const text of input.measures) {
      const [metric, fn = metric && def.metrics.includes(metric) ? defaultFunction(metric) : undefined, ...rest] = text.split(':');
      if (!metric || !def.metrics.includes(metric) || !(FUNCTIONS as readonly string[]).includes(fn ?? '') || rest.length > 0) {
        throw new InvalidMeasureError(text, def.name, def.metrics);
      }
      const measure = { metric, fn: fn as AggregateFunction, key: `${metric}_${fn}` };
      const refused = refusal(metric, measure.fn, input);
      if (refused) throw refused;
      // The same measure twice is one column.
      if (!measures.some((m) => m.key === measure.key)) measures.push(measure);
    }
  }
  let order: AggregatePlan['order'];
  if (input.order !== undefined) {
    const descending = input.order.startsWith('-');
    const key = descending ? input.order.slice(1) : input.order;
    const keys = [...input.groupBy, ...measures.map((m) => m.key), 'rows'];
    if (!keys.includes(key)) throw new InvalidOrderError(input.order, keys);
    order = { key, descending };
  }
  return { groupBy: input.groupBy, filters, measures, omitted, order, rollup: input.rollup };
}

/** What else, besides release, dataset and filters, decides an aggregate's groups: part of its cursors' scope and cache keys. */
export const planShape = (plan: AggregatePlan): string =>
  JSON.stringify([plan.groupBy, plan.measures.map((m) => m.key), plan.order ? `${plan.order.descending ? '-' : ''}${plan.order.key}` : null, plan.rollup]);

/** Every group of an aggregate, in answer order. */
export interface AggregateResult {
  readonly count: number;
  /** Dictionary codes of each group, `width` per group; -1 where a rollup row totals a dimension. */
  readonly codes: Int32Array;
  readonly width: number;
  /** Each group's measure values, one per measure of the plan. */
  readonly values: Float64Array;
  /** Served rows in each group. */
  readonly rows: Float64Array;
}

export const resultBytes = (result: AggregateResult) => result.codes.byteLength + result.values.byteLength + result.rows.byteLength + 64;

/** Runs `plan` over the smallest table that can answer it. */
export async function computeAggregate(
  def: DatasetDef,
  tables: AggregateTables,
  plan: AggregatePlan,
  period: YearRange | undefined,
  maxGroups: number,
): Promise<AggregateResult> {
  const index = (dimension: string) => def.dimensions.indexOf(dimension);
  const allowed = new Map<number, Set<number>>();
  for (const [dimension, values] of plan.filters) {
    const codes = tables.codes.get(dimension)!;
    allowed.set(index(dimension), new Set(values.flatMap((value) => codes.get(value) ?? [])));
  }
  if (period) {
    const years = tables.dictionaries[index('year')]!.values;
    const inRange = new Set(years.flatMap((year, code) => (Number(year) >= period.from && Number(year) <= period.to ? [code] : [])));
    const filtered = allowed.get(index('year'));
    allowed.set(index('year'), filtered ? new Set([...filtered].filter((code) => inRange.has(code))) : inRange);
  }
  const groupBy = plan.groupBy.map(index);
  const { source, allowed: scanned } = chooseSource(tables.sources, groupBy, allowed);

  const needs = new Map<number, MetricNeeds>();
  for (const { metric, fn } of plan.measures) {
    const m = def.metrics.indexOf(metric);
    const need = needs.get(m) ?? { index: m, sum: false, min: false, max: false };
    needs.set(m, { ...need, sum: need.sum || fn === 'sum' || fn === 'avg', min: need.min || fn === 'min', max: need.max || fn === 'max' });
  }
  const grouping = { groupBy, sizes: tables.sizes, allowed: scanned, metrics: [...needs.values()] };
  const groups = await group(source, grouping);
  const levels: Groups[] = [groups];
  if (plan.rollup && groups.count > 0) {
    // A subtotal that rolls up the totals dimension (state) adds up the total rows alone, as an aggregate without it does.
    const totals = def.totals && { position: plan.groupBy.indexOf(def.totals.dimension), code: tables.codes.get(def.totals.dimension)?.get(def.totals.value) };
    for (let keep = groupBy.length - 1; keep >= 0; keep--) {
      const include = totals && totals.position >= keep ? (g: number) => groups.codes[g * groupBy.length + totals.position] === totals.code : undefined;
      levels.push(subtotals(groups, keep, include));
    }
  }
  const count = levels.reduce((sum, level) => sum + level.count, 0);
  if (count > maxGroups) throw new TooManyGroupsError(count, maxGroups);
  // Where each measure's metric sits among the metrics the scan totalled.
  const positions = plan.measures.map((measure) => [...needs.keys()].indexOf(def.metrics.indexOf(measure.metric)));
  return sortGroups(levels, plan, positions, count);
}

/** Flattens the levels into one result sorted by the plan's order, ties (and the default) by the group tuple. */
function sortGroups(levels: readonly Groups[], plan: AggregatePlan, positions: readonly number[], count: number): AggregateResult {
  const width = plan.groupBy.length;
  const codes = new Int32Array(count * width);
  const values = new Float64Array(count * plan.measures.length);
  const rows = new Float64Array(count);
  let at = 0;
  for (const level of levels) {
    for (let g = 0; g < level.count; g++, at++) {
      codes.set(level.codes.subarray(g * width, (g + 1) * width), at * width);
      rows[at] = level.rows[g]!;
      plan.measures.forEach((measure, k) => {
        values[at * plan.measures.length + k] = measureValue(level, positions[k]!, g, measure.fn);
      });
    }
  }
  // Rolled-up dimensions (-1) sort after every value, so a subtotal follows its groups.
  const codeKey = (code: number) => (code < 0 ? Infinity : code);
  const byTuple = (a: number, b: number) => {
    for (let i = 0; i < width; i++) {
      const d = codeKey(codes[a * width + i]!) - codeKey(codes[b * width + i]!);
      if (d !== 0 && !Number.isNaN(d)) return d;
    }
    return 0;
  };
  let byOrder: (a: number, b: number) => number = () => 0;
  const { order } = plan;
  if (order) {
    const sign = order.descending ? -1 : 1;
    const dimension = plan.groupBy.indexOf(order.key);
    const measure = plan.measures.findIndex((m) => m.key === order.key);
    const n = plan.measures.length;
    byOrder =
      dimension >= 0
        ? (a, b) => sign * compare(codeKey(codes[a * width + dimension]!), codeKey(codes[b * width + dimension]!))
        : measure >= 0
          ? (a, b) => sign * compare(values[a * n + measure]!, values[b * n + measure]!)
          : (a, b) => sign * compare(rows[a]!, rows[b]!);
  }
  const sorted = Array.from({ length: count }, (_, i) => i).sort((a, b) => byOrder(a, b) || byTuple(a, b));
  return permute({ count, codes, width, values, rows }, sorted, plan.measures.length);
}

const compare = (a: number, b: number) => (a < b ? -1 : a > b ? 1 : 0);

function measureValue(level: Groups, m: number, g: number, fn: AggregateFunction): number {
  if (fn === 'min') return level.min[m]![g]!;
  if (fn === 'max') return level.max[m]![g]!;
  const sum = level.sums[m]!.rounded(g);
  return fn === 'sum' ? sum : sum / level.rows[g]!;
}

function permute(result: AggregateResult, order: readonly number[], n: number): AggregateResult {
  const { width } = result;
  const codes = new Int32Array(result.codes.length);
  const values = new Float64Array(result.values.length);
  const rows = new Float64Array(result.rows.length);
  order.forEach((from, to) => {
    codes.set(result.codes.subarray(from * width, (from + 1) * width), to * width);
    values.set(result.values.subarray(from * n, (from + 1) * n), to * n);
    rows[to] = result.rows[from]!;
  });
  return { ...result, codes, values, rows };
}
