import {
  type ApiError,
  InvalidGroupByError,
  InvalidMeasureError,
  InvalidOrderError,
  MixedTotalsError,
  MixedUnitsError,
  RateSumError,
} from '../errors/index.ts';
import { type DatasetDef, metricDef } from '../registry.ts';
import {
  type Column,
  checkDerivedMeasures,
  checkHaving,
  columnsOf,
  type DerivedInput,
  type DerivedPlan,
  derivedShape,
  planDerived,
} from './derived-plan.ts';
import type { Filters } from './filters.ts';
import { checkSeriesMeasures, isWideKey, NO_SERIES, planSeries, type SeriesInput, type SeriesPlan, seriesShape } from './series-plan.ts';

// An aggregate request as a plan: what to group, measure and order, after the
// registry's guards (src/query/aggregate.ts computes it).

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
  readonly derived: DerivedPlan;
  readonly series: SeriesPlan;
  /** Every key of the answer's values but `rows`, in output order: each measure, then its derived keys. */
  readonly columns: readonly Column[];
}

export interface AggregateInput {
  readonly groupBy: readonly string[];
  /** As sent: `<metric>:<fn>` or `<metric>`; undefined for every metric with its default function. */
  readonly measures: readonly string[] | undefined;
  readonly order: string | undefined;
  readonly rollup: boolean;
  readonly filters: Filters;
  readonly derived: DerivedInput;
  /** `index`, `cagr`, `latest` and `shape`; none when absent. */
  readonly series?: SeriesInput;
}

export const defaultFunction = (metric: string): AggregateFunction => (metricDef(metric).kind === 'rate' ? 'avg' : 'sum');

/**
 * Why `fn` of `metric` cannot be computed for this grouping and these filters, or
 * undefined when it can: a rate has no meaningful sum, and values in different
 * units (currencies) must not meet in one total.
 */
function refusal(metric: string, fn: AggregateFunction, input: AggregateInput): ApiError | undefined {
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
  const series = planSeries(input.groupBy, input.rollup, input.derived.compare !== undefined, input.series ?? NO_SERIES);
  const derived = planDerived(def, input.groupBy, input.rollup, input.derived);
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
  checkDerivedMeasures(measures, derived, filters);
  checkSeriesMeasures(measures, series);
  const columns = columnsOf(measures, derived, filters, series);
  const longKeys = columns.map((c) => c.key);
  const valueKeys = [...longKeys, 'rows'];
  // A wide answer's keys are the long ones per year (ggr_sum_2024), and year is no column of it.
  const wide = series.shape === 'wide';
  const dimensions = wide ? input.groupBy.filter((d) => d !== 'year') : input.groupBy;
  const shownKeys = wide ? [...longKeys.map((k) => `${k}_<year>`), 'rows'] : valueKeys;
  const isKey = (key: string) => (wide ? isWideKey(key, longKeys) : valueKeys.includes(key));
  let order: AggregatePlan['order'];
  if (input.order !== undefined) {
    const descending = input.order.startsWith('-');
    const key = descending ? input.order.slice(1) : input.order;
    if (!dimensions.includes(key) && !isKey(key)) throw new InvalidOrderError(input.order, [...dimensions, ...shownKeys]);
    order = { key, descending };
  }
  checkHaving(
    derived.having.filter((h) => !isKey(h.key)),
    shownKeys,
  );
  return { groupBy: input.groupBy, filters, measures, omitted, order, rollup: input.rollup, derived, series, columns };
}

/** What else, besides release, dataset and filters, decides an aggregate's groups: part of its cursors' scope and cache keys. */
export const planShape = (plan: AggregatePlan): string =>
  JSON.stringify([
    plan.groupBy,
    plan.measures.map((m) => m.key),
    plan.order ? `${plan.order.descending ? '-' : ''}${plan.order.key}` : null,
    plan.rollup,
    ...derivedShape(plan.derived),
    ...seriesShape(plan.series),
  ]);
