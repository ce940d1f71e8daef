import * as v from 'valibot';
import {
  CagrWithYearError,
  DerivedNeedsSumError,
  InvalidParametersError,
  RollupConflictError,
  SeriesConflictError,
  SeriesNeedsYearError,
} from '../../errors/index.ts';
import { type AggregateOption, type PlanRequest, sumsOnly } from './aggregate-option.ts';
import { single } from './params.ts';

// The time-series options of /v1/aggregate (docs/api.md "Time series"): an index to a
// base year, growth over a span, the latest years of each group, and the wide shape.
// `cagr` needs year out of group_by and every other one needs it in. Like the derived
// measures they apply to sums and come from the exact sums (query/series.ts).

/** `latest` keeps at most this many years per group: the World Bank's `mrv` allows as many, and more is a plain year filter. */
const MAX_LATEST = 50;

const SHAPES = ['long', 'wide'] as const;

const YEAR_FORMAT = 'Expected a year, e.g. 2019';
const CAGR_FORMAT = 'Expected <from>:<to>, two years with from before to, e.g. 2015:2024';
const LATEST_FORMAT = `Expected an integer from 1 to ${MAX_LATEST}`;

/** Refused without year in group_by: it reads each group's years side by side. */
const needsYear = (name: 'index' | 'latest' | 'shape=wide', request: PlanRequest) =>
  request.groupBy.includes('year') ? undefined : new SeriesNeedsYearError(name);

const INDEX_REQUEST = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&channel=Online&period=2019-01-01:2024-12-31';

export const index = {
  schema: v.optional(single(v.pipe(v.string(), v.regex(/^\d{4}$/, YEAR_FORMAT), v.transform(Number)))),
  description: `A year: adds \`k_index\` to each sum measure, 100 × the group's value ÷ the value of the same group (every other group_by dimension equal) in that year, read even where \`year\` or \`period\` filters it out. Null where that group has no rows in the base year or sums to 0 there. Needs \`year\` in group_by. Given once. Example: \`GET ${INDEX_REQUEST}&index=2019\``,
  examples: [
    { value: '2019', request: `${INDEX_REQUEST}&index=2019` },
    { value: '2021', request: `${INDEX_REQUEST}&index=2021` },
  ],
  errors: {
    badIndex: new InvalidParametersError({ index: [YEAR_FORMAT] }),
    indexNeedsYear: new SeriesNeedsYearError('index'),
    indexOfAvg: new DerivedNeedsSumError('index', 'ggr:avg'),
  },
  key: (year) => year,
  integer: true,
  needs: (_, request) => needsYear('index', request),
  columns: { kinds: ['index'], refusal: sumsOnly('index') },
  meta: (year) => ({ index: year }),
  metaSchema: { index: { type: 'integer', description: 'The base year of `_index`.' } },
} satisfies AggregateOption<number | undefined>;

/** The two years of a compound annual growth rate. */
export interface Span {
  readonly from: number;
  readonly to: number;
}

const CAGR_REQUEST = '/v1/aggregate?metric=ggr&group_by=country&fx=USD&order=-ggr_sum_cagr&limit=10';

export const cagr = {
  schema: v.optional(
    single(
      v.pipe(
        v.string(),
        v.regex(/^\d{4}:\d{4}$/, CAGR_FORMAT),
        v.transform((text): Span => {
          const [from, to] = text.split(':').map(Number);
          return { from: from!, to: to! };
        }),
        v.check((span) => span.from < span.to, CAGR_FORMAT),
      ),
    ),
  ),
  description: `\`<from>:<to>\`, two years with from before to: adds to each sum measure \`k_from\` and \`k_to\` (the group's sum in each year, read whatever \`year\` and \`period\` say) and \`k_cagr\` = (\`k_to\` ÷ \`k_from\`)^(1 ÷ (to − from)) − 1, a fraction as \`k_pct_change\` is. Null where either year has no rows, \`k_from\` ≤ 0 or \`k_to\` < 0. Needs \`year\` out of group_by; not with compare, index, latest or shape=wide. Given once. Example: \`GET ${CAGR_REQUEST}&cagr=2015:2024\``,
  examples: [
    { value: '2015:2024', request: `${CAGR_REQUEST}&cagr=2015:2024` },
    { value: '2020:2024', request: `${CAGR_REQUEST}&cagr=2020:2024` },
  ],
  errors: {
    badCagr: new InvalidParametersError({ cagr: [CAGR_FORMAT] }),
    cagrWithYear: new CagrWithYearError(),
    cagrWithCompare: new SeriesConflictError('cagr', 'compare'),
  },
  key: (span) => `${span.from}:${span.to}`,
  client: 'span',
  // The others need year in group_by: the conflict is named before either's need.
  conflicts: (_, request) => {
    const other = ['index', 'latest', 'shape', 'compare'].map(request.given).find((given) => given !== undefined);
    return other === undefined ? undefined : new SeriesConflictError('cagr', other);
  },
  needs: (_, request) => (request.groupBy.includes('year') ? new CagrWithYearError() : undefined),
  columns: { kinds: ['from', 'to', 'cagr'], refusal: sumsOnly('cagr') },
  meta: (span) => ({ cagr: { from: span.from, to: span.to, years: span.to - span.from } }),
  metaSchema: {
    cagr: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'years'],
      description: 'The span of `_cagr`: its two years and the years between them.',
      properties: { from: { type: 'integer' }, to: { type: 'integer' }, years: { type: 'integer', minimum: 1 } },
    },
  },
} satisfies AggregateOption<Span | undefined>;

const LATEST_REQUEST = '/v1/aggregate?metric=ggr&group_by=country,year&fx=USD&temporal=Current';

export const latest = {
  schema: v.optional(
    single(
      v.pipe(
        v.string(),
        v.regex(/^\d{1,3}$/, LATEST_FORMAT),
        v.transform(Number),
        v.minValue(1, LATEST_FORMAT),
        v.maxValue(MAX_LATEST, LATEST_FORMAT),
      ),
    ),
  ),
  description: `1 to ${MAX_LATEST}: keeps, for each group of the other group_by dimensions, only its \`latest\` most recent years that have rows under the filters (the World Bank's \`mrv\`); derived values are of every year the filters keep, then the cut comes before having, order and paging, and \`meta.latest.cut\` counts the groups left out. Needs \`year\` in group_by; not with rollup. Given once. Example: \`GET ${LATEST_REQUEST}&latest=3\``,
  examples: [
    { value: '3', request: `${LATEST_REQUEST}&latest=3` },
    { value: '1', request: `${LATEST_REQUEST}&latest=1` },
  ],
  errors: {
    badLatest: new InvalidParametersError({ latest: [LATEST_FORMAT] }),
    latestNeedsYear: new SeriesNeedsYearError('latest'),
    rollupLatest: new RollupConflictError('latest'),
  },
  key: (n) => n,
  integer: true,
  needs: (_, request) => needsYear('latest', request) ?? (request.rollup ? new RollupConflictError('latest') : undefined),
  meta: (n, { result }) => ({ latest: { n, cut: result.cut ?? 0 } }),
  metaSchema: {
    latest: {
      type: 'object',
      additionalProperties: false,
      required: ['n', 'cut'],
      description: 'The latest years kept per group, and how many groups (a group in one year) were left out.',
      properties: { n: { type: 'integer', minimum: 1, maximum: MAX_LATEST }, cut: { type: 'integer', minimum: 0 } },
    },
  },
} satisfies AggregateOption<number | undefined>;

const SHAPE_REQUEST = '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&period=2020-01-01:2024-12-31';

export const shape = {
  schema: v.optional(single(v.picklist(SHAPES, `Expected ${SHAPES.join(' or ')}`)), 'long'),
  description: `\`long\` (the default: one row per group) or \`wide\`: one row per group of the other group_by dimensions, each value key \`k\` (measures and derived keys alike) as one column per year, \`k_<year>\`, years ascending within each key and null where the group has no rows that year; \`rows\` adds up its years, and \`meta.years\` lists the years. \`order\` and \`having\` take those keys (\`-ggr_sum_2024\`). Same in JSON, CSV and Arrow. Needs \`year\` in group_by; not with rollup. Given once. Example: \`GET ${SHAPE_REQUEST}&shape=wide\``,
  examples: [
    { value: 'wide', request: `${SHAPE_REQUEST}&shape=wide` },
    { value: 'long', request: `${SHAPE_REQUEST}&shape=long` },
  ],
  errors: { wideNeedsYear: new SeriesNeedsYearError('shape=wide'), rollupWide: new RollupConflictError('shape=wide') },
  key: (s) => s,
  label: (s) => `shape=${s}`,
  needs: (_, request) => needsYear('shape=wide', request) ?? (request.rollup ? new RollupConflictError('shape=wide') : undefined),
  keys: { '_<year>': 'with `shape=wide`: every key of the long answer for that year, one column per year' },
  meta: (s, { result }) => ({ shape: s, years: result.wide?.years ?? [] }),
  metaSchema: {
    shape: { enum: ['wide'], description: 'The shape, when wide.' },
    years: { type: 'array', items: { type: 'integer' }, description: 'With `shape=wide`: the years of the columns, ascending.' },
  },
} satisfies AggregateOption<(typeof SHAPES)[number]>;

/** The time-series options, in the order the document lists them. */
export const SERIES_OPTIONS = { index, cagr, latest, shape };
