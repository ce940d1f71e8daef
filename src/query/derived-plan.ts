import {
  type ApiError,
  CompareNeedsYearError,
  DerivedNeedsSumError,
  InvalidHavingError,
  InvalidPerError,
  InvalidShareError,
  MixedUnitsError,
  RollupConflictError,
} from '../errors/index.ts';
import {
  type DatasetDef,
  DENOMINATOR_NAMES,
  DENOMINATORS,
  type DenominatorDef,
  type DenominatorName,
  denominatorKeys,
  metricDef,
} from '../registry.ts';
import { type ColumnKind, columnKey } from './column-kinds.ts';
import type { Unmatched } from './derived.ts';
import type { Filters } from './filters.ts';
import { NO_SERIES, type SeriesPlan, seriesKinds } from './series-plan.ts';

// The derived measures of an aggregate (docs/api.md "Derived measures"): what
// `compare`, `share`, `per` and `having` ask for, checked against the grouping, the
// measures and the registry's denominators, and the answer's keys they add.

export const COMPARES = ['previous_year'] as const;
export type Compare = (typeof COMPARES)[number];

/** PostgREST's words. */
export const HAVING_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const;
export type HavingOp = (typeof HAVING_OPS)[number];

/** One `having=<key>.<op>.<number>` condition, as sent and as parsed. */
export interface Having {
  readonly text: string;
  readonly key: string;
  readonly op: HavingOp;
  readonly value: number;
}

export interface PerPlan {
  readonly metric: DenominatorName;
  /** The dataset holding the denominator. */
  readonly dataset: string;
  /** The dimensions a numerator row is matched on, as the registry lists them. */
  readonly keys: readonly string[];
}

export interface DerivedInput {
  readonly compare: Compare | undefined;
  readonly share: string | undefined;
  readonly per: DenominatorName | undefined;
  readonly having: readonly Having[];
}

export interface DerivedPlan {
  readonly compare: Compare | undefined;
  /** `all`, or a group_by dimension. */
  readonly share: string | undefined;
  readonly per: PerPlan | undefined;
  /** Distinct conditions, in the order first sent; all must hold. */
  readonly having: readonly Having[];
}

export const NO_DERIVED: DerivedPlan = { compare: undefined, share: undefined, per: undefined, having: [] };

export interface Column {
  readonly key: string;
  /** Index of its measure in the plan's measures. */
  readonly measure: number;
  readonly kind: ColumnKind;
}

/**
 * The answer's columns in output order: each measure, then its derived keys (the
 * comparison's three, its share, its ratio, then its index and growth from the series
 * parameters). A share is of a sum; a ratio of a sum in the unit its denominator asks for.
 */
export function columnsOf(
  measures: readonly { readonly metric: string; readonly key: string; readonly fn: string }[],
  derived: DerivedPlan,
  filters: Filters,
  series: SeriesPlan = NO_SERIES,
): Column[] {
  return measures.flatMap((measure, m) => {
    const kinds: ColumnKind[] = ['value'];
    if (derived.compare) kinds.push('prev', 'change', 'pct_change');
    if (derived.share && !shareRefusal(measure.metric, measure.fn)) kinds.push('share');
    if (derived.per && !perRefusal(measure.metric, measure.fn, derived.per.metric, filters)) kinds.push('per');
    kinds.push(...seriesKinds(measure.fn, series));
    return kinds.map((kind) => ({ key: columnKey(kind, measure.key, derived.per?.metric), measure: m, kind }));
  });
}

/** The denominators that may divide `def`'s sums. */
export const denominatorsOf = (def: DatasetDef): DenominatorName[] =>
  DENOMINATOR_NAMES.filter((name) => (DENOMINATORS[name].numerators as readonly string[]).includes(def.name));

/** A denominator as the catalog, OpenAPI and docs describe it to users. */
export interface DenominatorEntry {
  readonly metric: DenominatorName;
  readonly dataset: string;
  readonly keys: readonly string[];
  readonly numerator_unit?: string;
  readonly means: string;
}

/** The denominators that may divide `def`'s sums, as the registry defines them. */
export function denominatorEntries(def: DatasetDef): DenominatorEntry[] {
  return denominatorsOf(def).map((metric) => {
    const denominator: DenominatorDef = DENOMINATORS[metric];
    const { dataset, means, numeratorUnit } = denominator;
    return { metric, dataset, keys: denominatorKeys(denominator, def), ...(numeratorUnit && { numerator_unit: numeratorUnit }), means };
  });
}

/** Whether `metric`'s values are in `unit` for these filters: by its own unit, or a currency dimension fixed to it. */
function inUnit(metric: string, unit: string, filters: Filters): boolean {
  const def = metricDef(metric);
  if (def.unit === unit) return true;
  const from = def.unitFrom;
  return (
    from !== undefined && from.one === 'currency' && filters.get(from.dimension)?.length === 1 && filters.get(from.dimension)![0] === unit
  );
}

/** Why a share of `<metric>:<fn>` cannot be had, or undefined: shares are of sums. */
function shareRefusal(metric: string, fn: string): ApiError | undefined {
  return fn === 'sum' ? undefined : new DerivedNeedsSumError('share', `${metric}:${fn}`);
}

/** Why `<metric>:<fn>` cannot be divided `per`, or undefined: ratios are of sums, in the unit the denominator asks for. */
export function perRefusal(metric: string, fn: string, per: DenominatorName, filters: Filters): ApiError | undefined {
  if (fn !== 'sum') return new DerivedNeedsSumError('per', `${metric}:${fn}`);
  const unit = (DENOMINATORS[per] as DenominatorDef).numeratorUnit;
  if (unit === undefined || inUnit(metric, unit, filters)) return undefined;
  const from = metricDef(metric).unitFrom;
  return new MixedUnitsError(
    from?.one === 'currency'
      ? `Cannot divide ${metric} per ${per}, which is in ${unit}, unless ${metric} is in ${unit} too: filter ${from.dimension} to ${unit} (${from.dimension}=${unit})`
      : `Cannot divide ${metric} per ${per}: ${metric} is in ${metricDef(metric).unit}, not ${unit}; measure a metric in ${unit}`,
  );
}

/**
 * Refuses `share` or `per` when it applies to none of the measures (each sum gets
 * its share or ratio; other measures are left as they are), with the first
 * measure's reason, which names the fix.
 */
export function checkDerivedMeasures(
  measures: readonly { readonly metric: string; readonly fn: string }[],
  derived: DerivedPlan,
  filters: Filters,
): void {
  if (derived.share !== undefined && measures.every((m) => shareRefusal(m.metric, m.fn)))
    throw shareRefusal(measures[0]!.metric, measures[0]!.fn)!;
  const per = derived.per?.metric;
  if (per !== undefined && measures.every((m) => perRefusal(m.metric, m.fn, per, filters)))
    throw perRefusal(measures[0]!.metric, measures[0]!.fn, per, filters)!;
}

/** Checks the derived parameters against the grouping and the dataset; throws the 400 to answer. */
export function planDerived(def: DatasetDef, groupBy: readonly string[], rollup: boolean, input: DerivedInput): DerivedPlan {
  if (input.compare && !groupBy.includes('year')) throw new CompareNeedsYearError();
  if (input.share !== undefined) {
    if (rollup) throw new RollupConflictError('share');
    if (input.share !== 'all' && !groupBy.includes(input.share)) throw new InvalidShareError(input.share, groupBy);
  }
  if (input.having.length > 0 && rollup) throw new RollupConflictError('having');
  let per: PerPlan | undefined;
  if (input.per !== undefined) {
    const allowed = denominatorsOf(def);
    if (!allowed.includes(input.per)) throw new InvalidPerError(input.per, def.name, allowed);
    const denominator = DENOMINATORS[input.per];
    per = { metric: input.per, dataset: denominator.dataset, keys: denominatorKeys(denominator, def) };
  }
  const having = input.having.filter((h, i) => input.having.findIndex((o) => o.text === h.text) === i);
  return { compare: input.compare, share: input.share, per, having };
}

/** Refuses a `having` whose key the answer has not: `keys` are its measure keys and `rows`. */
export function checkHaving(having: readonly Having[], keys: readonly string[]): void {
  for (const h of having) if (!keys.includes(h.key)) throw new InvalidHavingError(h.text, keys);
}

/** Whether `value` passes `h`; a null (NaN) never does. */
export function passes(h: Having, value: number): boolean {
  if (Number.isNaN(value)) return false;
  switch (h.op) {
    case 'eq':
      return value === h.value;
    case 'neq':
      return value !== h.value;
    case 'gt':
      return value > h.value;
    case 'gte':
      return value >= h.value;
    case 'lt':
      return value < h.value;
    case 'lte':
      return value <= h.value;
  }
}

/** What the derived parameters add to a plan's shape (cursor scope and cache key); nothing when none is given, so plain aggregates keep theirs. */
export function derivedShape(derived: DerivedPlan): unknown[] {
  if (!derived.compare && derived.share === undefined && !derived.per && derived.having.length === 0) return [];
  return [
    {
      compare: derived.compare ?? null,
      share: derived.share ?? null,
      per: derived.per?.metric ?? null,
      having: derived.having.map((h) => h.text).sort(),
    },
  ];
}

/** What `meta` says of the derived measures applied: each parameter echoed, and the keys a denominator lacks. */
export function derivedMeta(derived: DerivedPlan, unmatched: Unmatched | undefined) {
  return {
    ...(derived.compare && { compare: derived.compare }),
    ...(derived.share !== undefined && { share: derived.share }),
    ...(derived.per && { per: { metric: derived.per.metric, dataset: derived.per.dataset, keys: derived.per.keys } }),
    ...(derived.having.length > 0 && { having: derived.having.map((h) => h.text) }),
    ...(unmatched && { unmatched }),
  };
}
