import type { DatasetDef } from '../registry.ts';
import type { AggregateTables } from '../store/aggregate-tables.ts';
import type { Groups, MetricNeeds } from '../store/aggregation.ts';
import type { Turns } from '../store/slices.ts';
import { type Allowed, type Level, withPriorYears } from './aggregate-groups.ts';
import type { AggregatePlan, Column } from './aggregate-plan.ts';
import {
  Comparison,
  type LevelDenominators,
  type MeasureSource,
  measureValue,
  perValue,
  priorGroups,
  type ShareTotals,
  shareTotalsOf,
  shareValue,
} from './derived.ts';
import type { Matched } from './per-denominator.ts';
import { cagrValue, cagrYears, groupsInYear, indexValue, type Span, withYears, yearCode, yearSum, yearText } from './series.ts';

// The kinds of column an aggregate's answer has, one entry each, in the order a
// measure's keys follow it (docs/api.md "Derived measures" and "Time series"): how a
// kind's key is made from its measure's, what the catalog says it holds, what it needs
// prepared before its values (shared by the kinds that need the same, and done once
// for them all), and its values. The aggregate looks a column's kind up here; nothing
// branches on it.

/** What an aggregate gives the preparations once its rows are grouped. */
export interface AggregateRun {
  readonly def: DatasetDef;
  readonly tables: AggregateTables;
  readonly plan: AggregatePlan;
  /** The scan's group_by (dimension indexes), the codes the filters allow, and the metrics it totalled. */
  readonly groupBy: readonly number[];
  readonly allowed: Allowed;
  readonly needs: readonly MetricNeeds[];
  /** Each measure's, by its index in the plan. */
  readonly sources: readonly MeasureSource[];
  readonly levels: readonly Level[];
  /** With `per`: its denominator, matched to the groups. */
  readonly per: Matched | undefined;
  readonly turns: Turns;
}

/** What some kinds need before their values, prepared once per aggregate whatever number of kinds and measures share it. */
export interface Preparation<S> {
  /** The codes the scan reads beyond the filters' `read`: rows whose groups it needs but does not show. */
  readonly reads?: (def: DatasetDef, tables: AggregateTables, plan: AggregatePlan, read: Allowed) => Allowed;
  /** Runs once per aggregate; gives the state each level's cells read, made once per level. */
  readonly prepare: (run: AggregateRun) => Promise<(level: Level, l: number) => S | Promise<S>>;
}

/** One column's values in one level, by group. */
export interface Cells {
  /** NaN for null. */
  readonly value: (g: number) => number;
  /** The exact decimal where the value's double prints other digits; absent where the kind has none. */
  readonly text?: (g: number) => string | undefined;
}

type States = ReadonlyMap<Preparation<unknown>, unknown>;

/** One entry of the table. */
export interface ColumnKindDef {
  /** Appended to the measure's key to make the column's; `<metric>` stands for per's denominator. */
  readonly suffix: string;
  /** What the key holds, in its unit, as the catalog's `derived` states it; none for the measure's own value. */
  readonly means: string | undefined;
  readonly preparation: Preparation<unknown>;
  /** Its cells for the measure read at `source` in one level, from the level's prepared states. */
  readonly cells: (states: States, groups: Groups, source: MeasureSource) => Cells;
}

function kind<S>(entry: {
  suffix: string;
  means?: string;
  preparation: Preparation<S>;
  cells: (state: S, groups: Groups, source: MeasureSource) => Cells;
}): ColumnKindDef {
  const { suffix, means, preparation, cells } = entry;
  // `states` holds each preparation's own state: the one `preparation` made is an S.
  return { suffix, means, preparation, cells: (states, groups, source) => cells(states.get(preparation) as S, groups, source) };
}

const NOTHING: Preparation<undefined> = { prepare: async () => () => undefined };

/** compare: each group's prior year, read even where the filters leave it out. */
const PRIOR_YEAR: Preparation<Comparison> = {
  reads: (def, tables, _plan, read) => withPriorYears(def, tables, read),
  prepare: async ({ def, tables, turns }) => {
    return async (level) => new Comparison(level.groups, await priorGroups(def, tables, level, turns));
  },
};

/** share: the totals shares divide by, of the detail level (share refuses rollup). */
const SHARE_TOTALS: Preparation<ShareTotals> = {
  prepare: async ({ def, tables, plan, levels, allowed, sources, turns }) => {
    const totals = await shareTotalsOf(def, tables, plan, levels[0]!, allowed, sources, turns);
    return () => totals;
  },
};

/** per: each level's denominators. */
const PER_DENOMINATORS: Preparation<LevelDenominators> = {
  prepare: async ({ per }) => {
    return (level) => per!.level(level);
  },
};

/** index: each group's group in the base year, read even where the filters leave it out, and shown only if they allow it. */
const BASE_YEAR: Preparation<Int32Array> = {
  reads: (def, tables, plan, read) => withYears(def, tables, read, [plan.values.index!]),
  prepare: async ({ def, tables, plan, turns }) => {
    const code = yearCode(def, tables, plan.values.index!);
    return (level) => groupsInYear(def, level, code, turns);
  },
};

/** cagr: the groups of its first and last years. */
const CAGR_YEARS: Preparation<Span> = {
  prepare: ({ def, tables, plan, groupBy, allowed, needs, turns }) =>
    cagrYears(def, tables, plan.values.cagr!, { groupBy, allowed, needs, rollup: plan.values.rollup }, turns),
};

/** Every kind of column, by name, in the order a measure's keys follow it (and the catalog lists them). */
export const COLUMN_KINDS = {
  value: kind({
    suffix: '',
    preparation: NOTHING,
    cells: (_, groups, source) => {
      const value = (g: number) => measureValue(groups, source, g);
      if (source.fn !== 'sum') return { value };
      const sums = groups.sums[source.position]!;
      return { value, text: (g) => sums.text(g) };
    },
  }),
  prev: kind({
    suffix: '_prev',
    means: "the same group's value one year earlier, in the measure's unit",
    preparation: PRIOR_YEAR,
    cells: (comparison, _, source) => ({
      value: (g) => comparison.of(source, g).prev,
      text: (g) => comparison.of(source, g).prevText,
    }),
  }),
  change: kind({
    suffix: '_change',
    means: "this value minus `_prev`, in the measure's unit",
    preparation: PRIOR_YEAR,
    cells: (comparison, _, source) => ({
      value: (g) => comparison.of(source, g).change,
      text: (g) => comparison.of(source, g).changeText,
    }),
  }),
  pct_change: kind({
    suffix: '_pct_change',
    means: 'the change as a fraction of `_prev` (`_change ÷ _prev`: 0.05 is 5% growth)',
    preparation: PRIOR_YEAR,
    cells: (comparison, _, source) => ({ value: (g) => comparison.of(source, g).pctChange }),
  }),
  share: kind({
    suffix: '_share',
    means: "the group's fraction of its total (0.25 is a quarter)",
    preparation: SHARE_TOTALS,
    cells: (totals, groups, { position }) => ({ value: (g) => shareValue(groups, position, g, totals) }),
  }),
  per: kind({
    suffix: '_per_<metric>',
    means: 'the sum divided by the denominator over the same keys, a plain ratio (hold: a fraction of turnover)',
    preparation: PER_DENOMINATORS,
    cells: (denominators, groups, { position }) => ({ value: (g) => perValue(groups, position, g, denominators) }),
  }),
  index: kind({
    suffix: '_index',
    means: "100 × the value ÷ the same group's value in the `index` year (100 in the base year)",
    preparation: BASE_YEAR,
    cells: (bases, groups, { position }) => {
      const sums = groups.sums[position]!;
      return { value: (g) => indexValue(sums, bases, g) };
    },
  }),
  from: kind({
    suffix: '_from',
    means: "the group's sum in the first year of `cagr`, in the measure's unit",
    preparation: CAGR_YEARS,
    cells: (span, _, { position }) => ({ value: (g) => yearSum(span.from, position, g), text: (g) => yearText(span.from, position, g) }),
  }),
  to: kind({
    suffix: '_to',
    means: "the group's sum in the last year of `cagr`, in the measure's unit",
    preparation: CAGR_YEARS,
    cells: (span, _, { position }) => ({ value: (g) => yearSum(span.to, position, g), text: (g) => yearText(span.to, position, g) }),
  }),
  cagr: kind({
    suffix: '_cagr',
    means:
      'the compound annual growth from `_from` to `_to`, `(_to ÷ _from)^(1 ÷ years) − 1`, a fraction as `_pct_change` is (0.05 is 5% a year)',
    preparation: CAGR_YEARS,
    cells: (span, _, { position }) => ({ value: (g) => cagrValue(span, position, g) }),
  }),
} satisfies Record<string, ColumnKindDef>;

/** What a column of the answer holds for its measure. */
export type ColumnKind = keyof typeof COLUMN_KINDS;

/**
 * Each derived key's suffix and what it holds, in its unit: the catalog states them
 * from here. Every ratio is a plain fraction (0.05, not 5), so a client formats them
 * all the same way.
 */
export const DERIVED_KEYS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(COLUMN_KINDS).flatMap(({ suffix, means }): [string, string][] => (means === undefined ? [] : [[suffix, means]])),
);

/** The key of `kind`'s column for the measure keyed `measure`: `ggr_sum`, `ggr_sum_share`, `ggr_sum_per_<per>`. */
export const columnKey = (kind: ColumnKind, measure: string, per: string | undefined): string =>
  measure + COLUMN_KINDS[kind].suffix.replace('<metric>', per ?? '');

/** The preparations `columns` need, each once, in the table's order. */
const preparationsOf = (columns: readonly Column[]): Preparation<unknown>[] => {
  const kinds: ColumnKindDef[] = Object.values(COLUMN_KINDS);
  return [...new Set(kinds.filter((k) => columns.some((c) => COLUMN_KINDS[c.kind] === k)).map((k) => k.preparation))];
};

/** The codes an aggregate with `columns` reads: `allowed`, widened by what their preparations read. */
export function columnReads(columns: readonly Column[], def: DatasetDef, tables: AggregateTables, plan: AggregatePlan, allowed: Allowed) {
  return preparationsOf(columns).reduce((read, p) => p.reads?.(def, tables, plan, read) ?? read, allowed);
}

/** Prepares what `columns` need, once each; then, level by level, each column's cells. */
export async function columnCells(columns: readonly Column[], run: AggregateRun): Promise<(level: Level, l: number) => Promise<Cells[]>> {
  const prepared = new Map<Preparation<unknown>, (level: Level, l: number) => unknown>();
  for (const preparation of preparationsOf(columns)) prepared.set(preparation, await preparation.prepare(run));
  return async (level, l) => {
    const states = new Map<Preparation<unknown>, unknown>();
    for (const [preparation, ofLevel] of prepared) states.set(preparation, await ofLevel(level, l));
    return columns.map((column) => COLUMN_KINDS[column.kind].cells(states, level.groups, run.sources[column.measure]!));
  };
}
