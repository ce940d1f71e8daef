import type { Denominators, Registry } from '../registry.ts';

// Request and row types derived from the dataset registry, so a filter the server
// would refuse as an invalid dimension does not compile.

type Financial = Extract<Registry[number], { kind: 'financial' }>;
type Reference = Extract<Registry[number], { kind: 'reference' }>;

export type Metric = Financial['name'];
export type ReferenceDataset = Reference['name'];

type Def<M extends Metric> = Extract<Financial, { name: M }>;
export type DimensionOf<M extends Metric> = Def<M>['dimensions'][number];
export type MetricValueOf<M extends Metric> = Def<M>['metrics'][number];

type OneOrMany<T> = T | readonly T[];

/** Filters of `metric`: one value or several per dimension (`year` as integers), and `period`. */
export type Filters<M extends Metric> = {
  readonly [D in DimensionOf<M>]?: D extends 'year' ? OneOrMany<number> : OneOrMany<string>;
} & {
  /** `YYYY-MM-DD:YYYY-MM-DD` (spec 4.1). */
  readonly period?: string;
};

export interface FinancialRow<M extends Metric> {
  readonly dimensions: { readonly [D in DimensionOf<M>]: D extends 'year' ? number : string };
  readonly values: { readonly [V in MetricValueOf<M>]: number };
}

/** A measure of `metric`: one of its metrics, alone (its default function) or as `<metric>:<fn>`. */
export type MeasureOf<M extends Metric> = MetricValueOf<M> | `${MetricValueOf<M>}:${'sum' | 'avg' | 'min' | 'max'}`;

/** The denominators `per` may divide `metric`'s sums by (the registry's DENOMINATORS). */
export type PerOf<M extends Metric> = {
  [P in keyof Denominators]: M extends Denominators[P]['numerators'][number] ? P : never;
}[keyof Denominators];

/** A `having` condition: `<key>.<op>.<number>`, e.g. `ggr_sum.gt.1e9`. */
export type Having = `${string}.${'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte'}.${number}`;

/** What /v1/aggregate takes besides the metric: every filter of `metric`, and how to group, measure, derive and order. */
export type AggregateQuery<M extends Metric> = Filters<M> & {
  /** At most 6; their order is the column and default sort order. */
  readonly group_by?: readonly DimensionOf<M>[];
  readonly measure?: MeasureOf<M> | readonly MeasureOf<M>[];
  /** A group_by dimension, a measure key (`ggr_sum`) or `rows`; `-` first for descending. */
  readonly order?: string;
  /** Adds subtotal rows and a grand total; a rolled-up dimension is null. */
  readonly rollup?: boolean;
  /** Adds `k_prev`, `k_change` and `k_pct_change` (a fraction: 0.05 is 5%) per measure key against the year before; needs `year` in group_by. */
  readonly compare?: 'previous_year';
  /** Adds `k_share` per sum: its fraction of the total over every value of this group_by dimension, or of the grand total (`all`). */
  readonly share?: DimensionOf<M> | 'all';
  /** Adds `k_per_<metric>` per sum: divided by another dataset's metric over the keys of the group's rows. */
  readonly per?: PerOf<M>;
  /** Keeps the groups passing every condition, before order and paging. */
  readonly having?: Having | readonly Having[];
  /** A year: adds `k_index` per sum, 100 × its value ÷ the same group's value that year; needs `year` in group_by. */
  readonly index?: number;
  /** `<from>:<to>`: adds `k_from`, `k_to` and `k_cagr` (a fraction: 0.05 is 5% a year) per sum; needs `year` out of group_by. */
  readonly cagr?: `${number}:${number}`;
  /** 1 to 50: keeps each group's latest n years with rows, before having and order; needs `year` in group_by. */
  readonly latest?: number;
  /** `wide`: one row per group of the other dimensions, each key as `<key>_<year>` columns; needs `year` in group_by. */
  readonly shape?: 'long' | 'wide';
};

export interface AggregateRow<M extends Metric> {
  /** The group_by dimensions only; null where a rollup row totals that dimension. */
  readonly dimensions: { readonly [D in DimensionOf<M>]?: (D extends 'year' ? number : string) | null };
  /** `<metric>_<fn>` per measure (null only for a sum beyond the largest double), and the rows added up. */
  readonly values: { readonly [key: string]: number | null } & { readonly rows: number };
}

export interface AggregateMeta<M extends Metric> {
  readonly dataset: M;
  readonly metric: M;
  readonly group_by: readonly DimensionOf<M>[];
  readonly measures: readonly string[];
  readonly filters_applied: Readonly<Record<string, readonly string[]>>;
  /** Default measures left out because they cannot be combined here, and why. */
  readonly omitted?: readonly { readonly measure: string; readonly reason: string }[];
  readonly compare?: 'previous_year';
  readonly share?: string;
  /** The denominator applied, and the keys a row is matched on. */
  readonly per?: { readonly metric: PerOf<M>; readonly dataset: string; readonly keys: readonly string[] };
  readonly having?: readonly string[];
  /** The base year of `_index`. */
  readonly index?: number;
  /** The span of `_cagr`. */
  readonly cagr?: { readonly from: number; readonly to: number; readonly years: number };
  /** The latest years kept per group, and the groups (a group in one year) left out. */
  readonly latest?: { readonly n: number; readonly cut: number };
  readonly shape?: 'wide';
  /** With `shape=wide`: the years of the columns, ascending. */
  readonly years?: readonly number[];
  /** With `per`: the keys without a denominator row (their groups' ratios are null), counted, the first ten. */
  readonly unmatched?: { readonly count: number; readonly keys: readonly Readonly<Record<string, string | number>>[] };
  readonly row_count: number;
  readonly release: string;
  /** Without groups: each filter value the release does not hold, and what was meant. */
  readonly warnings?: readonly string[];
}

/** What /v1/revisions takes besides the metric: every filter of `metric`, the two releases and the kinds of change. */
export type RevisionQuery<M extends Metric> = Filters<M> & {
  /** The earlier release `YYYY-MM`; by default the one published before `to`, or `to` itself when there is none (no rows). */
  readonly from?: string;
  /** The later release; by default the current one. */
  readonly to?: string;
  readonly change?: Change | readonly Change[];
};

export type Change = 'added' | 'removed' | 'changed';

export interface RevisionRow<M extends Metric> {
  readonly dimensions: FinancialRow<M>['dimensions'];
  readonly change: Change;
  /** The metrics in `from`; null for an added row. */
  readonly before: FinancialRow<M>['values'] | null;
  /** The metrics in `to`; null for a removed row. */
  readonly after: FinancialRow<M>['values'] | null;
}

/** One entry of GET /v1/releases. */
export interface ReleaseInfo {
  readonly id: string;
  readonly published_at: string;
  readonly current: boolean;
  readonly synthetic: boolean;
  readonly datasets: Readonly<Record<string, { readonly row_count: number; readonly first_year?: number; readonly last_year?: number }>>;
  /** Rows added, removed and changed per dataset against `changes_against`. */
  readonly changes?: Readonly<Record<string, { readonly added: number; readonly removed: number; readonly changed: number }>>;
  readonly changes_against?: string;
}

export type ReferenceRow<R extends ReferenceDataset> = { readonly [D in Extract<Reference, { name: R }>['dimensions'][number]]: string };

export interface CatalogEntry {
  readonly name: string;
  readonly description: string;
  readonly dimensions: readonly string[];
  readonly metrics: readonly string[];
}

/** Spec 7's flattened `details`. */
export interface ErrorDetails {
  readonly formErrors: readonly string[];
  readonly fieldErrors: Readonly<Record<string, readonly string[]>>;
}

/** The spec's X-RateLimit-* headers of the last response (undefined when absent). */
export interface RateLimit {
  readonly limit: number | undefined;
  readonly remaining: number | undefined;
  readonly resetSeconds: number | undefined;
}

/** One page of any format, as the walk yields it. */
export interface Page<Body> {
  readonly body: Body;
  /** Pass as `cursor` to get the next page; undefined on the last one. */
  readonly nextCursor: string | undefined;
  /** The cursor this page was requested with (undefined for the first). */
  readonly cursor: string | undefined;
  readonly rateLimit: RateLimit;
  readonly requestId: string | undefined;
  /** A CSV or Arrow page's `X-Warnings`: each filter value the release does not hold (JSON pages have them in `meta.warnings`). */
  readonly warnings?: readonly string[];
}

/** One value of a dimension in /v1/facets, and how many rows have it under the other dimensions' filters. */
export interface FacetValue<V> {
  readonly value: V;
  readonly rows: number;
}

/** /v1/facets' answer for `metric`: each dimension's values, most rows first. */
export interface FacetsAnswer<M extends Metric> {
  readonly data: { readonly [D in DimensionOf<M>]: readonly FacetValue<D extends 'year' ? number : string>[] };
  readonly meta: {
    readonly dataset: M;
    readonly metric: M;
    readonly filters_applied: Readonly<Record<string, readonly string[]>>;
    /** FACET_VALUES: the most values listed per dimension. */
    readonly facet_values: number;
    /** Per dimension, how many values with rows are not listed. */
    readonly values_left_out: { readonly [D in DimensionOf<M>]: number };
    readonly release: string;
    readonly warnings?: readonly string[];
  };
}

export interface FinancialPage<M extends Metric> {
  /** `warnings`: on a page without rows, each filter value the release does not hold, and what was meant (docs/api.md "Responses"). */
  readonly meta: {
    dataset: M;
    metric: M;
    filters_applied: Record<string, string[]>;
    row_count: number;
    release: string;
    warnings?: string[];
  };
  readonly data: FinancialRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

export interface ReferencePage<R extends ReferenceDataset> {
  readonly meta: { dataset: R; row_count: number };
  readonly data: ReferenceRow<R>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

export interface RevisionPage<M extends Metric> {
  readonly meta: {
    dataset: M;
    metric: M;
    from: string;
    to: string;
    change?: string[];
    filters_applied: Record<string, string[]>;
    row_count: number;
  };
  readonly data: RevisionRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

export interface AggregatePage<M extends Metric> {
  readonly meta: AggregateMeta<M>;
  readonly data: AggregateRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}
