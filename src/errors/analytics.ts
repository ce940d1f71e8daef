import { ApiError } from './api-error.ts';

// What /v1/aggregate refuses: groupings, measures and orders it does not have,
// combinations the registry's guards forbid, derived measures that do not apply.

/** A `group_by` name that is not a dimension of the metric; listed as the filter error lists them. */
export class InvalidGroupByError extends ApiError {
  override readonly code = 'invalid_group_by';

  constructor(dimension: string, metric: string, valid: readonly string[]) {
    super(400, { error: `Invalid group_by dimension "${dimension}" for metric "${metric}". Valid dimensions: ${valid.join(', ')}` });
  }
}

export class InvalidMeasureError extends ApiError {
  override readonly code = 'invalid_measure';

  constructor(measure: string, metric: string, metrics: readonly string[]) {
    super(400, {
      error: `Invalid measure "${measure}" for metric "${metric}": use <metric>:<fn> or <metric> alone, with a metric of ${metrics.join(', ')} and fn one of sum, avg, min, max`,
    });
  }
}

export class InvalidOrderError extends ApiError {
  override readonly code = 'invalid_order';

  constructor(order: string, keys: readonly string[]) {
    super(400, { error: `Invalid order "${order}": use one of ${keys.join(', ')}, with a leading - for descending` });
  }
}

/** An aggregate the registry's guards refuse; the reason names the fix. */
abstract class CombineRefusedError extends ApiError {
  constructor(reason: string) {
    super(400, { error: reason });
  }
}

/** Adding up rows measured in different units (currencies) would give a meaningless total. */
export class MixedUnitsError extends CombineRefusedError {
  override readonly code = 'mixed_units';
}

/** Adding a total to the rows it already totals would count them twice. */
export class MixedTotalsError extends CombineRefusedError {
  override readonly code = 'mixed_totals';
}

/** A sum of rates means nothing. */
export class RateSumError extends CombineRefusedError {
  override readonly code = 'rate_sum';
}

/**
 * A derived measure (`compare`, `share`, `per`, `having` on /v1/aggregate) this
 * request cannot have; the text names the fix.
 */
abstract class DerivedRefusedError extends ApiError {
  constructor(reason: string) {
    super(400, { error: reason });
  }
}

/** `compare=previous_year` pairs each group with its year's predecessor, so it needs `year` among the groups. */
export class CompareNeedsYearError extends DerivedRefusedError {
  override readonly code = 'compare_needs_year';

  constructor() {
    super('Cannot compare with the previous year without year in group_by: add year to group_by');
  }
}

/** `share=` names neither `all` nor a dimension of group_by. */
export class InvalidShareError extends DerivedRefusedError {
  override readonly code = 'invalid_share';

  constructor(share: string, groupBy: readonly string[]) {
    super(
      `Invalid share "${share}": use all, or a group_by dimension${groupBy.length ? ` (${groupBy.join(', ')})` : ': add one to group_by'}`,
    );
  }
}

/** `per=` names a denominator that does not divide this dataset. */
export class InvalidPerError extends DerivedRefusedError {
  override readonly code = 'invalid_per';

  constructor(per: string, metric: string, allowed: readonly string[]) {
    super(
      `Cannot divide ${metric} per ${per}: ${allowed.length ? `use per=${allowed.join(' or per=')}` : `no denominator divides ${metric}`}`,
    );
  }
}

/** What each derived parameter takes of a measure, as the refusal words it. */
const NOUNS = { share: 'a share', per: 'a ratio', index: 'an index', cagr: 'a growth rate' } as const;

/** A share or ratio of an average, minimum or maximum: only sums have them. */
export class DerivedNeedsSumError extends DerivedRefusedError {
  override readonly code = 'derived_needs_sum';

  constructor(derived: 'share' | 'per' | 'index' | 'cagr', measure: string) {
    const [metric] = measure.split(':');
    super(`Cannot take ${NOUNS[derived]} of ${measure}: ${derived} applies to sums; measure ${metric}:sum or leave ${derived} out`);
  }
}

/** Why each parameter and a rollup do not go together. */
const ROLLUP_WHY = {
  share: "a subtotal is not a share of its own groups' total",
  having: 'hiding groups would leave subtotals of groups not shown',
  // Each group keeps its own years, so a subtotal over them would add up different years for each of its groups.
  latest: 'a subtotal would add up different years for each of its groups',
  'shape=wide': 'a subtotal over the years has no year column to go in',
} as const;

/** `share`, `having`, `latest` or `shape=wide` with `rollup=true`. */
export class RollupConflictError extends DerivedRefusedError {
  override readonly code = 'rollup_conflict';

  constructor(parameter: keyof typeof ROLLUP_WHY) {
    super(`Cannot combine ${parameter} with rollup=true (${ROLLUP_WHY[parameter]}): leave out rollup or ${parameter}`);
  }
}

/** A `having` whose key is not a key of the answer. */
export class InvalidHavingError extends DerivedRefusedError {
  override readonly code = 'invalid_having';

  constructor(having: string, keys: readonly string[]) {
    super(`Invalid having "${having}": the key must be one of ${keys.join(', ')}`);
  }
}

/**
 * `index`, `latest` and `shape=wide` read a group's years side by side, so they need
 * `year` among the groups.
 */
export class SeriesNeedsYearError extends DerivedRefusedError {
  override readonly code = 'series_needs_year';

  constructor(parameter: 'index' | 'latest' | 'shape=wide') {
    super(`Cannot use ${parameter} without year in group_by (it reads each group's years side by side): add year to group_by`);
  }
}

/** `cagr` spans two years within each group, so the groups cannot be years themselves. */
export class CagrWithYearError extends DerivedRefusedError {
  override readonly code = 'cagr_with_year';

  constructor() {
    super("Cannot take cagr with year in group_by (each group's growth spans its two years): leave year out of group_by");
  }
}

/** Two time-series parameters that ask for opposite groupings: cagr needs year out of group_by, the other needs it in. */
export class SeriesConflictError extends DerivedRefusedError {
  override readonly code = 'series_conflict';

  constructor(first: string, second: string) {
    super(
      `Cannot combine ${first} with ${second}: ${first} needs year out of group_by and ${second} needs it in; leave out ${first} or ${second}`,
    );
  }
}

export class TooManyGroupsError extends ApiError {
  override readonly code = 'too_many_groups';

  constructor(groups: number, max: number) {
    super(400, {
      error: `The aggregate has ${groups} groups, more than the ${max} one request may return: filter to fewer rows or group by fewer dimensions`,
    });
  }
}
