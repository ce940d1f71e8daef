import {
  type ApiError,
  InvalidHavingError,
  InvalidMeasureError,
  InvalidOrderError,
  MixedUnitsError,
  RateSumError,
} from '../errors/index.ts';
import { type DatasetDef, metricDef } from '../registry.ts';
import { type ColumnKind, columnKey } from './column-kinds.ts';
import type { Filters } from './filters.ts';
import { type AggregateValues, PLANNED } from './options/aggregate.ts';
import { type AggregateFunction, FUNCTIONS, type Measure, type MetaSource, type PlanRequest } from './options/aggregate-option.ts';
import { type DenominatorEntry, denominatorEntry } from './options/derived.ts';
import { isGiven } from './options/option.ts';
import { checkGroupBy, totalsFilters } from './totals-rule.ts';

// An aggregate request as a plan: what to group, measure and order, after the
// registry's guards and each option's own checks, in the order the options are
// listed (options/aggregate.ts); src/query/aggregate.ts computes it.

export interface Column {
  readonly key: string;
  /** Index of its measure in the plan's measures. */
  readonly measure: number;
  readonly kind: ColumnKind;
}

export interface AggregatePlan {
  readonly groupBy: readonly string[];
  /** The request's filters, plus the totals rows' one when it neither groups nor filters by that dimension. */
  readonly filters: Filters;
  readonly measures: readonly Measure[];
  /** Default measures left out because they cannot be combined for this request, with why. */
  readonly omitted: readonly { readonly measure: string; readonly reason: string }[];
  /** Every option as parsed: the computation reads its own. */
  readonly values: AggregateValues;
  /** With `per`: the denominator, as the registry defines it for this dataset. */
  readonly per: DenominatorEntry | undefined;
  /** Every key of the answer's values but `rows`, in output order: each measure, then its derived keys. */
  readonly columns: readonly Column[];
}

export const defaultFunction = (metric: string): AggregateFunction => (metricDef(metric).kind === 'rate' ? 'avg' : 'sum');

/**
 * Why `fn` of `metric` cannot be computed for this grouping and these filters, or
 * undefined when it can: a rate has no meaningful sum, and values in different
 * units (currencies) must not meet in one total.
 */
function refusal(metric: string, fn: AggregateFunction, request: PlanRequest): ApiError | undefined {
  const def = metricDef(metric);
  if (fn === 'sum' && def.kind === 'rate') return new RateSumError(`Cannot sum ${metric}, a rate: use avg, min or max`);
  const unit = def.unitFrom;
  if (unit && !request.groupBy.includes(unit.dimension) && request.filters.get(unit.dimension)?.length !== 1) {
    return new MixedUnitsError(
      `Cannot combine ${metric} values in different ${unit.units}: filter ${unit.dimension} to one ${unit.one} or add ${unit.dimension} to group_by`,
    );
  }
  return undefined;
}

/** The measures asked for, or every metric's default less those refused here (omitted, with why). */
function measuresOf(def: DatasetDef, asked: readonly string[] | undefined, request: PlanRequest) {
  const measures: Measure[] = [];
  const omitted: { measure: string; reason: string }[] = [];
  if (asked === undefined) {
    for (const metric of def.metrics) {
      const fn = defaultFunction(metric);
      const refused = refusal(metric, fn, request);
      if (refused) omitted.push({ measure: `${metric}:${fn}`, reason: refused.body.error });
      else measures.push({ metric, fn, key: `${metric}_${fn}` });
    }
    // Nothing left to compute: the first reason is the fix to ask for.
    if (measures.length === 0) throw refusal(def.metrics[0]!, defaultFunction(def.metrics[0]!), request)!;
    return { measures, omitted };
  }
  for (const text of asked) {
    const [metric, fn = metric && def.metrics.includes(metric) ? defaultFunction(metric) : undefined, ...rest] = text.split(':');
    if (!metric || !def.metrics.includes(metric) || !(FUNCTIONS as readonly string[]).includes(fn ?? '') || rest.length > 0) {
      throw new InvalidMeasureError(text, def.name, def.metrics);
    }
    const measure = { metric, fn: fn as AggregateFunction, key: `${metric}_${fn}` };
    const refused = refusal(metric, measure.fn, request);
    if (refused) throw refused;
    // The same measure twice is one column.
    if (!measures.some((m) => m.key === measure.key)) measures.push(measure);
  }
  return { measures, omitted };
}

/** The options given, each with its value: the plan runs their checks and columns in the list's order. */
const givenOptions = (values: AggregateValues) =>
  Object.entries(PLANNED).flatMap(([name, option]) => {
    const value = values[name as keyof AggregateValues];
    return isGiven(option, value) ? [{ name, option, value: value as never }] : [];
  });

/**
 * Each measure's columns: its own value, then the kinds each option given adds to it.
 * An option that applies to none of the measures is refused with the first measure's reason.
 */
function columnsOf(
  given: ReturnType<typeof givenOptions>,
  measures: readonly Measure[],
  filters: Filters,
  per: string | undefined,
): Column[] {
  const added = given.flatMap(({ option, value }) => {
    const { columns } = option;
    if (!columns) return [];
    const applies = measures.map((m) => columns.refusal?.(value, m, filters));
    if (applies.every((refused) => refused !== undefined)) throw applies[0]!;
    return [{ kinds: columns.kinds, applies: applies.map((refused) => refused === undefined) }];
  });
  return measures.flatMap((measure, m) => {
    const kinds: ColumnKind[] = ['value', ...added.flatMap(({ kinds, applies }) => (applies[m] ? kinds : []))];
    return kinds.map((kind) => ({ key: columnKey(kind, measure.key, per), measure: m, kind }));
  });
}

/**
 * Whether `key` names a column of a wide answer whose long keys are `keys`: a long key
 * and a year, or `rows` (every year's rows together). Which years have columns is
 * known once the rows are grouped; a year without one is null throughout.
 */
function isWideKey(key: string, keys: readonly string[]): boolean {
  if (key === 'rows') return true;
  const match = /^(.+)_(\d{4})$/.exec(key);
  return match !== null && keys.includes(match[1]!);
}

/** Checks a request against the dataset, the registry's guards and each option's own checks; throws the 400 to answer. */
export function planAggregate(def: DatasetDef, values: AggregateValues, requested: Filters): AggregatePlan {
  const groupBy = values.group_by;
  checkGroupBy(def, groupBy);
  const filters = totalsFilters(def, groupBy, requested);
  const given = givenOptions(values);
  const labels = new Map(given.map(({ name, option, value }) => [name, option.label?.(value) ?? name]));
  const request: PlanRequest = { def, groupBy, rollup: values.rollup, filters, given: (name) => labels.get(name) };
  for (const check of ['conflicts', 'needs'] as const) {
    for (const { option, value } of given) {
      const refused = option[check]?.(value, request);
      if (refused) throw refused;
    }
  }
  const { measures, omitted } = measuresOf(def, values.measure, request);
  const per = values.per === undefined ? undefined : denominatorEntry(def, values.per);
  const columns = columnsOf(given, measures, filters, per?.metric);
  // A wide answer's keys are the long ones per year (ggr_sum_2024), and year is no column of it.
  const wide = values.shape === 'wide';
  const longKeys = columns.map((c) => c.key);
  const dimensions = wide ? groupBy.filter((d) => d !== 'year') : groupBy;
  const shownKeys = wide ? [...longKeys.map((k) => `${k}_<year>`), 'rows'] : [...longKeys, 'rows'];
  const isKey = (key: string) => (wide ? isWideKey(key, longKeys) : shownKeys.includes(key));
  const { order, having } = values;
  if (order && !dimensions.includes(order.key) && !isKey(order.key)) throw new InvalidOrderError(order.text, [...dimensions, ...shownKeys]);
  for (const h of having) if (!isKey(h.key)) throw new InvalidHavingError(h.text, shownKeys);
  return { groupBy, filters, measures, omitted, values, per, columns };
}

/** What `meta` says of each option given, in the list's order, from the plan and what its computation found. */
export function optionsMeta(def: DatasetDef, plan: AggregatePlan, result: MetaSource['result']): Record<string, unknown> {
  return Object.assign({}, ...givenOptions(plan.values).map(({ option, value }) => option.meta?.(value, { def, result }) ?? {}));
}
