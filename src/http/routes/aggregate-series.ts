import * as v from 'valibot';
import {
  CagrWithYearError,
  DerivedNeedsSumError,
  InvalidParametersError,
  RollupConflictError,
  SeriesConflictError,
  SeriesNeedsYearError,
} from '../../errors/index.ts';
import { MAX_LATEST, type SeriesInput, SHAPES } from '../../query/series-plan.ts';
import type { ParameterNotes } from '../openapi/examples.ts';
import { single } from '../params/params.ts';

// /v1/aggregate's time-series parameters as the route takes and documents them:
// `index`, `cagr`, `latest` and `shape` (docs/api.md "Time series"); the plan is
// src/query/series-plan.ts. Kept apart so that the aggregate route stays one screen of
// parameters.

const YEAR_FORMAT = 'Expected a year, e.g. 2019';
const CAGR_FORMAT = 'Expected <from>:<to>, two years with from before to, e.g. 2015:2024';
const LATEST_FORMAT = `Expected an integer from 1 to ${MAX_LATEST}`;

export const seriesControls = {
  index: v.optional(single(v.pipe(v.string(), v.regex(/^\d{4}$/, YEAR_FORMAT), v.transform(Number)))),
  cagr: v.optional(
    single(
      v.pipe(
        v.string(),
        v.regex(/^\d{4}:\d{4}$/, CAGR_FORMAT),
        v.transform((text) => {
          const [from, to] = text.split(':').map(Number);
          return { from: from!, to: to! };
        }),
        v.check((span) => span.from < span.to, CAGR_FORMAT),
      ),
    ),
  ),
  latest: v.optional(
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
  shape: v.optional(single(v.picklist(SHAPES, `Expected ${SHAPES.join(' or ')}`)), 'long'),
};

/** The parsed parameters as the plan takes them. */
export const seriesInput = (query: {
  index?: number;
  cagr?: { from: number; to: number };
  latest?: number;
  shape: SeriesInput['shape'];
}): SeriesInput => ({ index: query.index, cagr: query.cagr, latest: query.latest, shape: query.shape });

/** One request each parameter works in as it is, for the document and the tests (test/time-series.test.ts sends them). */
export const SERIES_EXAMPLES = {
  index: '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&channel=Online&period=2019-01-01:2024-12-31&index=2019',
  cagr: '/v1/aggregate?metric=ggr&group_by=country&fx=USD&cagr=2015:2024&order=-ggr_sum_cagr&limit=10',
  latest: '/v1/aggregate?metric=ggr&group_by=country,year&fx=USD&temporal=Current&latest=3',
  shape: '/v1/aggregate?metric=ggr&group_by=region,year&fx=USD&period=2020-01-01:2024-12-31&shape=wide',
} as const;

export const SERIES_DESCRIPTIONS = {
  index: `A year: adds \`k_index\` to each sum measure, 100 × the group's value ÷ the value of the same group (every other group_by dimension equal) in that year, read even where \`year\` or \`period\` filters it out. Null where that group has no rows in the base year or sums to 0 there. Needs \`year\` in group_by. Given once. Example: \`GET ${SERIES_EXAMPLES.index}\``,
  cagr: `\`<from>:<to>\`, two years with from before to: adds to each sum measure \`k_from\` and \`k_to\` (the group's sum in each year, read whatever \`year\` and \`period\` say) and \`k_cagr\` = (\`k_to\` ÷ \`k_from\`)^(1 ÷ (to − from)) − 1, a fraction as \`k_pct_change\` is. Null where either year has no rows, \`k_from\` ≤ 0 or \`k_to\` < 0. Needs \`year\` out of group_by; not with compare, index, latest or shape=wide. Given once. Example: \`GET ${SERIES_EXAMPLES.cagr}\``,
  latest: `1 to ${MAX_LATEST}: keeps, for each group of the other group_by dimensions, only its \`latest\` most recent years that have rows under the filters (the World Bank's \`mrv\`); derived values are of every year the filters keep, then the cut comes before having, order and paging, and \`meta.latest.cut\` counts the groups left out. Needs \`year\` in group_by; not with rollup. Given once. Example: \`GET ${SERIES_EXAMPLES.latest}\``,
  shape: `\`long\` (the default: one row per group) or \`wide\`: one row per group of the other group_by dimensions, each value key \`k\` (measures and derived keys alike) as one column per year, \`k_<year>\`, years ascending within each key and null where the group has no rows that year; \`rows\` adds up its years, and \`meta.years\` lists the years. \`order\` and \`having\` take those keys (\`-ggr_sum_2024\`). Same in JSON, CSV and Arrow. Needs \`year\` in group_by; not with rollup. Given once. Example: \`GET ${SERIES_EXAMPLES.shape}\``,
};

/** Examples of the series parameters, for the document: each works with its example request above. */
export const SERIES_NOTES: Readonly<Record<string, ParameterNotes>> = {
  index: { example: '2019', schema: { pattern: '^\\d{4}$' } },
  cagr: { example: '2015:2024', schema: { pattern: '^\\d{4}:\\d{4}$' } },
  latest: { example: '3' },
  shape: { example: 'wide', values: [...SHAPES] },
};

/** The refusals of the series parameters, each as the catalog words it. */
export const SERIES_ERRORS = {
  badIndex: new InvalidParametersError({ index: [YEAR_FORMAT] }),
  badCagr: new InvalidParametersError({ cagr: [CAGR_FORMAT] }),
  badLatest: new InvalidParametersError({ latest: [LATEST_FORMAT] }),
  indexNeedsYear: new SeriesNeedsYearError('index'),
  latestNeedsYear: new SeriesNeedsYearError('latest'),
  wideNeedsYear: new SeriesNeedsYearError('shape=wide'),
  cagrWithYear: new CagrWithYearError(),
  cagrWithCompare: new SeriesConflictError('cagr', 'compare'),
  indexOfAvg: new DerivedNeedsSumError('index', 'ggr:avg'),
  rollupLatest: new RollupConflictError('latest'),
  rollupWide: new RollupConflictError('shape=wide'),
};

/** What `meta` carries of them, for the response schema. */
export const SERIES_META = {
  index: { type: 'integer', description: 'The base year of `_index`.' },
  cagr: {
    type: 'object',
    additionalProperties: false,
    required: ['from', 'to', 'years'],
    description: 'The span of `_cagr`: its two years and the years between them.',
    properties: { from: { type: 'integer' }, to: { type: 'integer' }, years: { type: 'integer', minimum: 1 } },
  },
  latest: {
    type: 'object',
    additionalProperties: false,
    required: ['n', 'cut'],
    description: 'The latest years kept per group, and how many groups (a group in one year) were left out.',
    properties: { n: { type: 'integer', minimum: 1, maximum: MAX_LATEST }, cut: { type: 'integer', minimum: 0 } },
  },
  shape: { enum: ['wide'], description: 'The shape, when wide.' },
  years: { type: 'array', items: { type: 'integer' }, description: 'With `shape=wide`: the years of the columns, ascending.' },
};
