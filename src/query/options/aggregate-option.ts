import { type ApiError, DerivedNeedsSumError } from '../../errors/index.ts';
import type { DatasetDef } from '../../registry.ts';
import type { ColumnKind } from '../column-kinds.ts';
import type { Unmatched } from '../derived.ts';
import type { Filters } from '../filters.ts';
import type { Given, QueryOption } from './option.ts';

// What an option of /v1/aggregate says beyond any query option: how the plan checks it
// against the rest of the request, the columns it adds to each measure, and what the
// answer's `meta` says of it (query/aggregate-plan.ts runs these in the list's order).

export const FUNCTIONS = ['sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof FUNCTIONS)[number];

export interface Measure {
  readonly metric: string;
  readonly fn: AggregateFunction;
  /** `<metric>_<fn>`: the key in `values` and the CSV column. */
  readonly key: string;
}

/** The request as the plan's checks see it: the grouping, the filters, and which other options are given. */
export interface PlanRequest {
  readonly def: DatasetDef;
  readonly groupBy: readonly string[];
  readonly rollup: boolean;
  /** The filters the aggregate reads with (national totals added where implied). */
  readonly filters: Filters;
  /** Option `name` as a refusal writes it (`index`, `shape=wide`) when it is given, else undefined. */
  readonly given: (name: string) => string | undefined;
}

/** What an answer's `meta` is made from. */
export interface MetaSource {
  readonly def: DatasetDef;
  /** With `shape=wide`: the years of the columns; with `latest`: the groups left out; with `per`: the keys without a denominator. */
  readonly result: { readonly wide?: { readonly years: readonly number[] }; readonly cut?: number; readonly unmatched?: Unmatched };
}

export interface AggregateOption<T> extends QueryOption<T> {
  /** How refusals write it when it is given; its name by default. */
  readonly label?: (value: Given<T>) => string;
  /** Another option it cannot go with, as the refusal to answer: every option's is checked before any `needs`. */
  readonly conflicts?: (value: Given<T>, request: PlanRequest) => ApiError | undefined;
  /** What it needs of the grouping and the rollup, as the refusal to answer. */
  readonly needs?: (value: Given<T>, request: PlanRequest) => ApiError | undefined;
  /**
   * The column kinds it adds after each measure's own (query/column-kinds.ts), for the
   * measures it applies to: where it applies to none, the first measure's refusal is the answer.
   */
  readonly columns?: {
    readonly kinds: readonly ColumnKind[];
    readonly refusal?: (value: Given<T>, measure: Measure, filters: Filters) => ApiError | undefined;
  };
  /** Value keys it adds besides its columns', and what each holds: the catalog's `derived` states them. */
  readonly keys?: Readonly<Record<string, string>>;
  /** What `meta` says of it, when it is given. */
  readonly meta?: (value: Given<T>, source: MetaSource) => Readonly<Record<string, unknown>>;
  /** The response schema of those `meta` fields. */
  readonly metaSchema?: Readonly<Record<string, unknown>>;
}

/** The refusal of an option that applies to sums only, for a measure that is not one (the option names itself in it). */
export const sumsOnly =
  (option: ConstructorParameters<typeof DerivedNeedsSumError>[0]) =>
  (_: unknown, m: Pick<Measure, 'metric' | 'fn'>): ApiError | undefined =>
    m.fn === 'sum' ? undefined : new DerivedNeedsSumError(option, `${m.metric}:${m.fn}`);
