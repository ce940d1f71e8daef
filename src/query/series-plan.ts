import {
  CagrWithYearError,
  DerivedNeedsSumError,
  RollupConflictError,
  SeriesConflictError,
  SeriesNeedsYearError,
} from '../errors/index.ts';
import type { ColumnKind } from './column-kinds.ts';

// The time-series parameters of an aggregate (docs/api.md "Time series"): `index`
// to a base year, growth over a span (`cagr`), the `latest` years of each group and
// the `wide` shape, checked against the grouping and each other. Like the derived
// measures (derived-plan.ts) they apply to sums and come from the exact sums.

export const SHAPES = ['long', 'wide'] as const;
export type Shape = (typeof SHAPES)[number];

/** `latest` keeps at most this many years per group: the World Bank's `mrv` allows as many, and more is a plain year filter. */
export const MAX_LATEST = 50;

export interface Cagr {
  readonly from: number;
  readonly to: number;
}

export interface SeriesInput {
  readonly index: number | undefined;
  readonly cagr: Cagr | undefined;
  readonly latest: number | undefined;
  readonly shape: Shape;
}

/** As given once checked; the same fields. */
export type SeriesPlan = SeriesInput;

export const NO_SERIES: SeriesPlan = { index: undefined, cagr: undefined, latest: undefined, shape: 'long' };

/**
 * The key the series parameters add that is no column kind, beside column-kinds.ts's
 * DERIVED_KEYS in the catalog: the wide shape's year suffix.
 */
export const SERIES_KEYS: Readonly<Record<string, string>> = {
  '_<year>': 'with `shape=wide`: every key of the long answer for that year, one column per year',
};

/** Whether any time-series parameter is given; without one the plan's shape and meta stay as they were. */
export const hasSeries = (s: SeriesPlan) => s.index !== undefined || s.cagr !== undefined || s.latest !== undefined || s.shape === 'wide';

/**
 * Checks the time-series parameters against the grouping; throws the 400 to answer.
 * `cagr` needs year out of group_by and every other one needs it in, so those pairs
 * are refused first, naming both, before either's own need is.
 */
export function planSeries(groupBy: readonly string[], rollup: boolean, compare: boolean, input: SeriesInput): SeriesPlan {
  if (input.cagr) {
    const inYear: [string, boolean][] = [
      ['index', input.index !== undefined],
      ['latest', input.latest !== undefined],
      ['shape=wide', input.shape === 'wide'],
      ['compare', compare],
    ];
    const other = inYear.find(([, given]) => given);
    if (other) throw new SeriesConflictError('cagr', other[0]);
    if (groupBy.includes('year')) throw new CagrWithYearError();
  }
  const year = groupBy.includes('year');
  if (input.index !== undefined && !year) throw new SeriesNeedsYearError('index');
  if (input.latest !== undefined && !year) throw new SeriesNeedsYearError('latest');
  if (input.shape === 'wide' && !year) throw new SeriesNeedsYearError('shape=wide');
  if (rollup && input.latest !== undefined) throw new RollupConflictError('latest');
  if (rollup && input.shape === 'wide') throw new RollupConflictError('shape=wide');
  return input;
}

/** The column kinds a measure gets from the series parameters, after its derived ones: index and cagr apply to sums. */
export function seriesKinds(fn: string, series: SeriesPlan): ColumnKind[] {
  if (fn !== 'sum') return [];
  return [...(series.index !== undefined ? (['index'] as const) : []), ...(series.cagr ? (['from', 'to', 'cagr'] as const) : [])];
}

/** Refuses `index` or `cagr` when no measure is a sum, with the first measure's reason, as share and per are refused. */
export function checkSeriesMeasures(measures: readonly { readonly metric: string; readonly fn: string }[], series: SeriesPlan): void {
  if (measures.some((m) => m.fn === 'sum')) return;
  const first = `${measures[0]!.metric}:${measures[0]!.fn}`;
  if (series.index !== undefined) throw new DerivedNeedsSumError('index', first);
  if (series.cagr) throw new DerivedNeedsSumError('cagr', first);
}

/** A wide answer's key for `key` in `year`: `ggr_sum_2024`, `ggr_sum_index_2024`. */
export const wideKey = (key: string, year: number | string) => `${key}_${year}`;

/**
 * Whether `key` names a column of a wide answer whose long keys are `keys`: a long key
 * and a year, or `rows` (every year's rows together). Which years have columns is
 * known once the rows are grouped; a year without one is null throughout.
 */
export function isWideKey(key: string, keys: readonly string[]): boolean {
  if (key === 'rows') return true;
  const match = /^(.+)_(\d{4})$/.exec(key);
  return match !== null && keys.includes(match[1]!);
}

/** What the series parameters add to a plan's shape (cursor scope and cache key); nothing without one. */
export const seriesShape = (s: SeriesPlan): unknown[] =>
  hasSeries(s)
    ? [{ index: s.index ?? null, cagr: s.cagr ? `${s.cagr.from}:${s.cagr.to}` : null, latest: s.latest ?? null, shape: s.shape }]
    : [];

/** What `meta` says of the series parameters applied; with latest, how many groups (a group's year) it left out. */
export function seriesMeta(s: SeriesPlan, cut: number | undefined, years: readonly number[] | undefined) {
  return {
    ...(s.index !== undefined && { index: s.index }),
    ...(s.cagr && { cagr: { from: s.cagr.from, to: s.cagr.to, years: s.cagr.to - s.cagr.from } }),
    ...(s.latest !== undefined && { latest: { n: s.latest, cut: cut ?? 0 } }),
    ...(s.shape === 'wide' && { shape: 'wide' as const, years: years ?? [] }),
  };
}
