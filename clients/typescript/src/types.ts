import type { GenericSchema, InferOutput } from 'valibot';
import type { AggregateFunction } from '../../../src/query/options/aggregate-option.ts';
import type { HavingOp } from '../../../src/query/options/derived.ts';
import type { AGGREGATE, HISTORY, REVISIONS } from '../../../src/query/options/endpoints.ts';
import type { CHANGES } from '../../../src/query/revisions.ts';
import type { Denominators, Registry } from '../../../src/registry.ts';

// Request and row types derived from the dataset registry and the endpoints' option
// lists (src/query/options/), so a filter the server would refuse as an invalid
// dimension does not compile, and a new option is typed where it is defined.

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
export type MeasureOf<M extends Metric> = MetricValueOf<M> | `${MetricValueOf<M>}:${AggregateFunction}`;

/** The denominators `per` may divide `metric`'s sums by (the registry's DENOMINATORS). */
export type PerOf<M extends Metric> = {
  [P in keyof Denominators]: M extends Denominators[P]['numerators'][number] ? P : never;
}[keyof Denominators];

/** A `having` condition: `<key>.<op>.<number>`, e.g. `ggr_sum.gt.1e9`. */
export type Having = `${string}.${HavingOp}.${number}`;

/** What a client sends for an option whose parsed value is not what it sends (its `client` shape), per metric. */
interface Shapes<M extends Metric> {
  dimensions: readonly DimensionOf<M>[];
  'dimension-or-all': DimensionOf<M> | 'all';
  measures: MeasureOf<M> | readonly MeasureOf<M>[];
  denominator: PerOf<M>;
  having: Having | readonly Having[];
  span: `${number}:${number}`;
  text: string;
  flag: boolean;
}

/** What a client sends for option `O`: its shape's type, or else its parsed value's (one value or several, where it repeats). */
type Sent<O, M extends Metric> = O extends { readonly client: infer S extends keyof Shapes<M> }
  ? Shapes<M>[S]
  : O extends { readonly schema: infer V extends GenericSchema }
    ? Exclude<InferOutput<V>, undefined> extends readonly (infer E)[]
      ? OneOrMany<E>
      : Exclude<InferOutput<V>, undefined>
    : never;

/**
 * An endpoint's own options (src/query/options/), each as a client sends it: those
 * with a key of their own. The rest (the dataset, period, page and release) are the
 * client's arguments and walk options.
 */
type OwnOptions<O, M extends Metric> = { readonly [K in keyof O as O[K] extends { readonly key: 'scope' } ? never : K]?: Sent<O[K], M> };

/** What /v1/aggregate takes besides the metric: every filter of `metric`, and its options (docs/api.md "Aggregates"). */
export type AggregateQuery<M extends Metric> = Filters<M> & OwnOptions<(typeof AGGREGATE)['options'], M>;

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** What `meta` says of each aggregate option given: each option's own fields (src/query/options/). */
type OptionsMeta<O> = Intersection<
  { [K in keyof O]: O[K] extends { readonly meta: (...args: never[]) => infer R } ? Partial<R> : never }[keyof O]
>;

export interface AggregateRow<M extends Metric> {
  /** The group_by dimensions only; null where a rollup row totals that dimension. */
  readonly dimensions: { readonly [D in DimensionOf<M>]?: (D extends 'year' ? number : string) | null };
  /** `<metric>_<fn>` per measure (null only for a sum beyond the largest double), and the rows added up. */
  readonly values: { readonly [key: string]: number | null } & { readonly rows: number };
}

export type AggregateMeta<M extends Metric> = OptionsMeta<(typeof AGGREGATE)['options']> & {
  readonly dataset: M;
  readonly metric: M;
  readonly group_by: readonly DimensionOf<M>[];
  readonly measures: readonly string[];
  readonly filters_applied: Readonly<Record<string, readonly string[]>>;
  /** Default measures left out because they cannot be combined here, and why. */
  readonly omitted?: readonly { readonly measure: string; readonly reason: string }[];
  readonly row_count: number;
  readonly release: string;
  readonly as_of?: AsOfMeta;
  /** Without groups: each filter value the release does not hold, and what was meant. */
  readonly warnings?: readonly string[];
};

/** What /v1/revisions takes besides the metric: every filter of `metric`, the two releases and the kinds of change. */
export type RevisionQuery<M extends Metric> = Filters<M> & OwnOptions<(typeof REVISIONS)['options'], M>;

export type Change = (typeof CHANGES)[number];

export interface RevisionRow<M extends Metric> {
  readonly dimensions: FinancialRow<M>['dimensions'];
  readonly change: Change;
  /** The metrics in `from`; null for an added row. */
  readonly before: FinancialRow<M>['values'] | null;
  /** The metrics in `to`; null for a removed row. */
  readonly after: FinancialRow<M>['values'] | null;
}

/** What /v1/history takes besides the metric: every filter of `metric`, the range of releases, the output and its shape. */
export type HistoryQuery<M extends Metric> = Filters<M> & OwnOptions<(typeof HISTORY)['options'], M>;

/** A row of /v1/history: which release fields it has depends on `output` (and `values`' keys on `shape`). */
export interface HistoryRow<M extends Metric> {
  readonly dimensions: FinancialRow<M>['dimensions'];
  /** output=changes. */
  readonly change?: 'added' | 'changed' | 'removed';
  readonly valid_from?: string;
  readonly valid_to?: string | null;
  /** output=first. */
  readonly first_release?: string;
  /** output=all, shape=long. */
  readonly release?: string;
  /** The metrics (`<metric>_<release>` with shape=wide, null where absent); null on a removed row. */
  readonly values: Readonly<Record<string, number | null>> | null;
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

/** One dataset of GET /v1/catalog; its size once a release is loaded. */
export interface CatalogEntry {
  readonly name: string;
  readonly description: string;
  readonly dimensions: readonly string[];
  /** Empty for a reference dataset. */
  readonly metrics: readonly string[];
  /** The denominators `per` divides its sums by. */
  readonly per?: readonly { readonly metric: string; readonly dataset: string; readonly keys: readonly string[]; readonly means: string }[];
  /** Each metric whose rows are in different units, and the dimension naming each row's unit (ggr's `fx`). */
  readonly units_from?: Readonly<Record<string, string>>;
  readonly row_count?: number;
  readonly first_year?: number;
  readonly last_year?: number;
}

/** GET /v1/catalog's answer: every dataset, each dimension's and each derived key's meaning, and the release described. */
export interface CatalogAnswer {
  readonly datasets: readonly CatalogEntry[];
  readonly dimensions: Readonly<Record<string, { readonly description: string; readonly values?: Readonly<Record<string, string>> }>>;
  /** Each derived key's suffix (`_share`, `_per_<metric>`) and what it holds. */
  readonly derived: Readonly<Record<string, string>>;
  /** Absent only while the first release loads. */
  readonly release?: { readonly id: string; readonly published_at: string; readonly synthetic: boolean };
  /** With `asOf`. */
  readonly as_of?: AsOfMeta;
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
    readonly as_of?: AsOfMeta;
    /** With endpoint=aggregate, when the national-totals rule applies: only rows whose `dimension` is `value` were counted. */
    readonly totals_rule?: { readonly dimension: string; readonly value: string; readonly means: string };
    readonly warnings?: readonly string[];
  };
}

/** `meta.as_of` of an answer read with `asOf`: the instant read (a date as the end of its UTC day) and the release served then. */
export interface AsOfMeta {
  readonly asked: string;
  readonly release: string;
}

export interface FinancialPage<M extends Metric> {
  /** `warnings`: on a page without rows, each filter value the release does not hold, and what was meant (docs/api.md "Responses"). */
  readonly meta: {
    dataset: M;
    metric: M;
    filters_applied: Record<string, string[]>;
    row_count: number;
    release: string;
    as_of?: AsOfMeta;
    warnings?: string[];
  };
  readonly data: FinancialRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

export interface ReferencePage<R extends ReferenceDataset> {
  readonly meta: { dataset: R; row_count: number; release: string; as_of?: AsOfMeta };
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

export interface HistoryPage<M extends Metric> {
  readonly meta: {
    dataset: M;
    metric: M;
    from: string;
    to: string;
    releases: string[];
    output: 'changes' | 'first' | 'all';
    shape: 'long' | 'wide';
    withdrawn: { id: string; withdrawn_at: string }[];
    filters_applied: Record<string, string[]>;
    row_count: number;
  };
  readonly data: HistoryRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

export interface AggregatePage<M extends Metric> {
  readonly meta: AggregateMeta<M>;
  readonly data: AggregateRow<M>[];
  readonly pagination: { cursor: string; has_more: boolean };
}

/** One limit that can refuse the key (GET /v1/usage); docs/api.md "Usage" says which setting sets each. */
export interface UsageLimit {
  readonly limit: number;
  /** Null while the service's Redis does not answer (`limiter: 'unavailable'`). */
  readonly used: number | null;
  readonly remaining: number | null;
  /** Whole seconds until a unit comes back; null for a limit on work at once. */
  readonly reset: number | null;
  readonly reset_at: string | null;
  /** The window in seconds; null for a limit on work at once. */
  readonly window: number | null;
}

/** Where the key stands now (GET /v1/usage). */
export interface UsageAnswer {
  readonly key: { readonly id: string; readonly client: string; readonly created_at: string; readonly last_used_at: string | null };
  readonly as_of: string;
  readonly limiter: 'redis' | 'memory' | 'unavailable' | 'disabled';
  /** The window the X-RateLimit-* headers describe. */
  readonly binding: 'minute' | 'day';
  readonly limits: Readonly<
    Record<'minute' | 'day' | 'exports_day' | 'exports_open' | 'heavy_seconds_minute' | 'heavy_running', UsageLimit>
  >;
  readonly last_refused: {
    readonly at: string;
    readonly limit: string;
    readonly path: string;
    readonly request_id: string;
    readonly retry_after: number | null;
  } | null;
}

/** One UTC day of the key's usage (GET /v1/usage/daily). */
export interface UsageDay {
  readonly date: string;
  readonly requests: number;
  readonly by_status: Readonly<Record<string, number>>;
  readonly by_endpoint: Readonly<Record<string, number>>;
  /** Refusals by the limit that refused: minute, day, exports_day, exports_open, heavy_seconds_minute, busy, timeout… */
  readonly refused: Readonly<Record<string, number>>;
  readonly exports: number;
  readonly bytes_sent: number;
  readonly heavy_seconds: number;
}
