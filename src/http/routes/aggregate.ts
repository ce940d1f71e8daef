import * as v from 'valibot';
import {
  CompareNeedsYearError,
  DerivedNeedsSumError,
  InvalidCursorError,
  InvalidFilterDimensionError,
  InvalidGroupByError,
  InvalidHavingError,
  InvalidMeasureError,
  InvalidOrderError,
  InvalidParametersError,
  InvalidPerError,
  InvalidShareError,
  MixedTotalsError,
  MixedUnitsError,
  RateSumError,
  RollupConflictError,
  TooManyGroupsError,
} from '../../errors/index.ts';
import { computeAggregate } from '../../query/aggregate.ts';
import { defaultFunction, FUNCTIONS, MAX_GROUP_BY, planAggregate, planShape } from '../../query/aggregate-plan.ts';
import { COMPARES, derivedMeta, HAVING_OPS, perRefusal } from '../../query/derived-plan.ts';
import { checkGroupCount } from '../../query/group-count.ts';
import { seriesMeta } from '../../query/series-plan.ts';
import { unmatchedValues } from '../../query/unmatched.ts';
import { DENOMINATOR_NAMES, DENOMINATORS, type DenominatorDef, findDataset, metricDef } from '../../registry.ts';
import { aggregateTable } from '../../render/aggregates.ts';
import { collect, renderTable, streamTable } from '../../render/table.ts';
import { envelope, releaseId, warnings } from '../openapi/components.ts';
import { AGGREGATE_EXAMPLE, AGGREGATE_NOTES, exampleRequest, type ParameterNotes } from '../openapi/examples.ts';
import { financialParameters, financialSets, PREFER_WAIT } from '../openapi/parameters.ts';
import { keyedErrors, metricErrors, pageResponses, ref, releaseResponses } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { HAVING_FORMAT, havingParam } from '../params/having.ts';
import { financialDataset } from '../params/metric.ts';
import { financialPageParams } from '../params/page.ts';
import { parseQuery, releaseParam, repeatable, single } from '../params/params.ts';
import { respondWithKeptPage } from '../respond/kept-page.ts';
import { PAGE_FORMATS, responseFormat } from '../respond/negotiate.ts';
import { withRelease } from '../respond/request-release.ts';
import { setWarningsHeader } from '../respond/warnings-header.ts';
import { SERIES_DESCRIPTIONS, SERIES_ERRORS, SERIES_META, SERIES_NOTES, seriesControls, seriesInput } from './aggregate-series.ts';
import type { Route } from './route.ts';

// GET /v1/aggregate: totals, averages, minima and maxima of a financial dataset's
// metrics over any filter, grouped by up to six dimensions (docs/api.md "Aggregates").

const groupByParam = v.optional(
  v.pipe(
    // Repeated (`group_by=region&group_by=year`) or comma-separated (`group_by=region,year`).
    repeatable(v.string()),
    v.transform((values) => values.flatMap((value) => value.split(','))),
    v.check((names) => names.every((name) => name !== ''), 'Expected dimension names, without empty ones'),
    v.check((names) => new Set(names).size === names.length, 'Each dimension may be grouped by once'),
    v.check((names) => names.length <= MAX_GROUP_BY, `At most ${MAX_GROUP_BY} dimensions`),
  ),
  [],
);

/** Parameters that shape the answer rather than filter rows. */
const controls = {
  ...financialPageParams(1000),
  release: releaseParam,
  group_by: groupByParam,
  measure: v.optional(repeatable(v.pipe(v.string(), v.minLength(1, 'Expected <metric> or <metric>:<fn>')))),
  order: v.optional(single(v.pipe(v.string(), v.minLength(1, 'Expected a group_by dimension or a measure key')))),
  rollup: v.pipe(
    v.optional(single(v.picklist(['true', 'false'], 'Expected true or false')), 'false'),
    v.transform((text) => text === 'true'),
  ),
  compare: v.optional(single(v.picklist(COMPARES, `Expected ${COMPARES.join(' or ')}`))),
  share: v.optional(single(v.pipe(v.string(), v.minLength(1, 'Expected all or a group_by dimension')))),
  per: v.optional(single(v.picklist(DENOMINATOR_NAMES, `Expected one of ${DENOMINATOR_NAMES.join(', ')}`))),
  having: havingParam,
  ...seriesControls,
};

export const schema = v.objectWithRest({ ...controls, year: yearParam }, filterParams);

const CONTROL_PARAMS = new Set(Object.keys(controls));

/** Each metric's kind, unit, default function and what combining it needs (the registry's METRICS); docs/api.md holds it too. */
export function metricsTable(): string {
  const rows = financialSets.flatMap((d) =>
    d.metrics.map((m) => {
      const def = metricDef(m);
      const needs = [def.kind === 'rate' ? 'no sum (a rate)' : '', def.unitFrom ? `one ${def.unitFrom.dimension}, filtered or grouped` : '']
        .filter(Boolean)
        .join('; ');
      return `| ${m} | ${d.name} | ${def.kind} | ${def.unit} | ${defaultFunction(m)} | ${needs || '—'} |`;
    }),
  );
  return ['| metric | dataset | kind | unit | default | to combine rows |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

const joinedOn = (d: DenominatorDef) => (d.keys === 'shared' ? 'every dimension the two datasets share, fx included' : d.keys.join(', '));

/** What each denominator `per` takes is and joins on, from the registry. */
const perList = () =>
  DENOMINATOR_NAMES.map((name) => {
    const d: DenominatorDef = DENOMINATORS[name];
    return `\`${name}\` (from ${d.dataset}, joined on ${joinedOn(d)}; for ${d.numerators.join(', ')}${d.numeratorUnit ? `; the numerator in ${d.numeratorUnit}` : ''}): ${d.means}`;
  }).join('; ');

/** Each denominator `per` takes, as docs/api.md tabulates it (from the registry's DENOMINATORS). */
export function denominatorsTable(): string {
  const rows = DENOMINATOR_NAMES.map((name) => {
    const d: DenominatorDef = DENOMINATORS[name];
    return `| ${name} | ${d.dataset} | ${joinedOn(d)} | ${d.numerators.join(', ')} | ${d.numeratorUnit ?? 'any'} | ${d.means} |`;
  });
  return ['| per | from | joined on | divides | numerator in | the ratio is |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

const DERIVED_DESCRIPTIONS = {
  compare:
    '`previous_year` adds, for each measure key `k`, `k_prev`, `k_change` (this minus prev) and `k_pct_change` (`this ÷ prev − 1`, a fraction: 0.05 is 5% growth), set against the same group one year earlier, found by year and read even when `year` or `period` filters it out. Null where that group does not exist; `k_pct_change` null where `k_prev` is 0. Needs `year` in group_by. Given once.',
  share:
    "`all` or a group_by dimension: adds `k_share` to each sum measure, its fraction of the total over every value of that dimension with the other group_by dimensions fixed (the dimension's own filter does not narrow the total), or of the grand total with `all`. Not with rollup. Given once.",
  per: `Divides each sum measure by another dataset's metric summed over exactly the keys of the group's rows, as \`k_per_<metric>\`; null where a key has no denominator row (counted in \`meta.unmatched\`). ${perList()}. Given once.`,
  having: `\`<key>.<op>.<number>\`, op one of ${HAVING_OPS.join(', ')}; repeat for several, all must hold. Keeps the groups whose value passes, after derived measures and before order and paging; null never passes. The key is a measure key of the answer, derived ones included, or \`rows\`. Not with rollup.`,
};

/** Examples of the derived parameters, for the document. */
const DERIVED_NOTES: Readonly<Record<string, ParameterNotes>> = {
  compare: { example: 'previous_year' },
  share: { example: 'channel' },
  per: { example: 'adult_population' },
  having: { example: ['ggr_sum.gt.1e9'] },
};

/** The refusals of the derived parameters, each as the catalog words it. */
const DERIVED_ERRORS = {
  badCompare: new InvalidParametersError({ compare: [`Expected ${COMPARES.join(' or ')}`] }),
  badPer: new InvalidParametersError({ per: [`Expected one of ${DENOMINATOR_NAMES.join(', ')}`] }),
  badHaving: new InvalidParametersError({ having: [HAVING_FORMAT] }),
  compareNeedsYear: new CompareNeedsYearError(),
  invalidShare: new InvalidShareError('product', ['country', 'channel']),
  invalidPer: new InvalidPerError('turnover', 'country', ['adult_population', 'gdp_usd']),
  perNeedsUsd: perRefusal('ggr', 'sum', 'gdp_usd', new Map([['fx', ['EUR']]]))!,
  shareOfAvg: new DerivedNeedsSumError('share', 'ggr:avg'),
  rollupShare: new RollupConflictError('share'),
  rollupHaving: new RollupConflictError('having'),
  invalidHaving: new InvalidHavingError('revenue.gt.1e9', ['ggr_sum', 'ggr_sum_share', 'rows']),
};

const DESCRIPTIONS = {
  limit:
    'Groups per page, given once. Without it, JSON pages by 1000 and **CSV and Arrow answer every group** (at most AGGREGATE_MAX_GROUPS; more is the `tooManyGroups` 400), so `pandas.read_csv` or R reads the whole result from one URL; with it, every format pages.',
  group_by: `Dimensions to group by, repeated or comma-separated, at most ${MAX_GROUP_BY}: their order is the column order and the default sort order.`,
  measure: `\`<metric>:<fn>\` with fn one of ${FUNCTIONS.join(', ')}, or \`<metric>\` for its default (sum, or avg for a rate); repeat for several. Without it: every metric of the dataset with its default, less those that cannot be combined here (named in \`meta.omitted\`).`,
  order:
    'A group_by dimension, a measure key (`ggr_sum`, derived ones included: `ggr_sum_share`) or `rows`; a leading `-` sorts descending; nulls come last either way. Ties, and the default, follow the group_by values in order. Given once.',
  rollup:
    '`true` adds subtotal rows (GROUP BY ROLLUP over group_by, in order) and a grand total; a rolled-up dimension is null. Given once.',
  ...DERIVED_DESCRIPTIONS,
  ...SERIES_DESCRIPTIONS,
};

function operation() {
  const fx = findDataset('fx', 'financial')!;
  return {
    operationId: 'getAggregate',
    tags: ['data'],
    summary: 'Totals, averages, minima and maxima of a financial dataset, grouped',
    description: `Groups the rows of one financial dataset that pass the filters by up to ${MAX_GROUP_BY} dimensions and computes each measure per group: sums are exact (the double nearest the true sum), averages divide that sum by \`rows\`. Takes every filter of /v1/financials. What each metric may be combined with:\n\n${metricsTable()}\n\nWithout a filter or a grouping on \`state\`, only national rows (\`state\` "") are read, since a country's national row already totals its states' rows. CSV and Arrow without \`limit\` are every group in one answer; JSON pages.`,
    parameters: [...financialParameters(schema, DESCRIPTIONS, { ...AGGREGATE_NOTES, ...DERIVED_NOTES, ...SERIES_NOTES }), PREFER_WAIT],
    'x-codeSamples': exampleRequest(AGGREGATE_EXAMPLE),
    responses: {
      ...pageResponses(
        'AggregateResponse',
        {
          csv: 'RFC 4180 CSV with a header row: the group_by dimensions, the measure keys, then `rows`; a rolled-up dimension is an empty field (an empty string value is `""`). Without `limit`: every group.',
          arrow:
            'Arrow IPC stream: text dimensions Utf8, `year` Int32, measures Float64, `rows` Int32; a rolled-up dimension is null. Without `limit`: every group, a record batch per 4,096, every field nullable.',
        },
        { description: 'CSV and Arrow without `limit`: every group of the result in one answer, with no `Link`.' },
      ),
      ...keyedErrors({
        ...DERIVED_ERRORS,
        ...SERIES_ERRORS,
        ...metricErrors(schema, 'aggregate'),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fx.dimensions),
        invalidGroupBy: new InvalidGroupByError('product', 'fx', fx.dimensions),
        invalidMeasure: new InvalidMeasureError('ggr:median', 'ggr', ['ggr']),
        invalidOrder: new InvalidOrderError('-revenue', ['region', 'ggr_sum', 'rows']),
        mixedCurrencies: new MixedUnitsError(
          'Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by',
        ),
        rateSum: new RateSumError('Cannot sum inflation, a rate: use avg, min or max'),
        mixedTotals: new MixedTotalsError(
          'Cannot add national totals (state "") to the rows they total: filter state to "" alone or leave "" out, or add state to group_by',
        ),
        tooManyGroups: new TooManyGroupsError(250_000, 100_000),
        invalidCursor: new InvalidCursorError(),
      }),
      ...releaseResponses(),
    },
  };
}

export const aggregate: Route = {
  path: '/v1/aggregate',
  async handle(ctx, services) {
    const {
      metric,
      period,
      limit,
      cursor,
      format: named,
      release,
      group_by,
      measure,
      order,
      rollup,
      compare,
      share,
      per,
      having,
      index,
      cagr,
      latest,
      shape,
      ...params
    } = parseQuery(schema, ctx.query);
    const def = financialDataset(metric, 'aggregate');
    const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
    const plan = planAggregate(def, {
      groupBy: group_by,
      measures: measure,
      order,
      rollup,
      filters,
      derived: { compare, share, per, having },
      series: seriesInput({ index, cagr, latest, shape }),
    });
    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    const parsed = cursor === undefined ? undefined : services.cursors.parse(cursor);
    const whole = format.name !== 'json' && ctx.query.limit === undefined;
    // Held while answering: the kept result needs no tables, but the rows are read from this release's store.
    await withRelease(ctx, services, { cursor: parsed, release }, async ({ id, datasets }) => {
      const served = datasets.get(def.name)!;
      setWarningsHeader(ctx, format.name, () => unmatchedValues(served, plan.filters));
      await respondWithKeptPage(ctx, services, {
        kind: 'aggregate',
        kept: services.aggregates,
        scope: { release: id, dataset: def.name, filters: plan.filters, period: period?.text, shape: planShape(plan) },
        format,
        cursor: parsed,
        // CSV and Arrow without `limit` are every group, at most AGGREGATE_MAX_GROUPS (docs/api.md "Aggregates").
        limit: whole ? undefined : limit,
        releases: [id],
        // Refused for its size before any row is grouped.
        compute: async (signal) => {
          await checkGroupCount(services.db, served, plan, period?.years, services.aggregateMaxGroups, signal);
          const tablesOf = (name: string) => datasets.get(name)!.aggregates;
          return computeAggregate(def, served.aggregates, plan, period?.years, tablesOf, signal);
        },
        count: (result) => result.count,
        render: (result, { start, end, pagination }) => {
          const unmatched = result.count === 0 ? unmatchedValues(served, plan.filters) : [];
          const meta = {
            dataset: def.name,
            metric: def.name,
            group_by: plan.groupBy,
            measures: result.wide?.keys ?? plan.columns.map((c) => c.key),
            filters_applied: filtersApplied(plan.filters, period),
            ...(plan.omitted.length > 0 && { omitted: plan.omitted }),
            ...derivedMeta(plan.derived, result.unmatched),
            ...seriesMeta(plan.series, result.cut, result.wide?.years),
            row_count: end - start,
            release: id,
            ...(unmatched.length > 0 && { warnings: unmatched }),
          };
          // A wide answer's rows are the groups of the other dimensions, its columns each key per year.
          const shown = result.wide
            ? { groupBy: plan.groupBy.filter((d) => d !== 'year'), columns: result.wide.keys.map((key) => ({ key })) }
            : plan;
          const dictionaries = shown.groupBy.map((d) => served.aggregates.dictionaries[def.dimensions.indexOf(d)]!);
          const table = aggregateTable({ plan: shown, result, dictionaries, start, end });
          // Up to AGGREGATE_MAX_GROUPS rows: rendered in slices that take turns with the event loop.
          if (whole) return collect(streamTable(format.name as 'csv' | 'arrow', [table]));
          return renderTable(format.name, table, { meta, pagination });
        },
      });
    });
  },
  operation: operation(),
  schemas: {
    AggregateRow: {
      type: 'object',
      additionalProperties: false,
      required: ['dimensions', 'values'],
      properties: {
        dimensions: {
          type: 'object',
          description:
            "The group: each group_by dimension's value; null where a rollup row totals that dimension. With `shape=wide`, every group_by dimension but `year`.",
          additionalProperties: { type: ['string', 'integer', 'null'] },
        },
        values: {
          type: 'object',
          description:
            'Each measure as `<metric>_<fn>` and its derived keys (`_prev`, `_change`, `_pct_change`, `_share`, `_per_<metric>`, `_index`, `_from`, `_to`, `_cagr`; every ratio a plain fraction, as /v1/catalog `derived` says), and `rows`: the rows added up. With `shape=wide`, each of those keys per year as `<key>_<year>`, and `rows` over the years. Null for a sum beyond the largest double, and for a derived value that has none.',
          required: ['rows'],
          properties: { rows: { type: 'integer', minimum: 0 } },
          additionalProperties: { type: ['number', 'null'] },
        },
      },
    },
    AggregateResponse: envelope(
      ref('AggregateRow'),
      {
        dataset: { enum: financialSets.map((d) => d.name) },
        metric: { enum: financialSets.map((d) => d.name) },
        group_by: { type: 'array', items: { type: 'string' } },
        measures: {
          type: 'array',
          items: { type: 'string' },
          description: 'Every key of `values` but `rows`, in column order: each measure, then its derived keys.',
        },
        filters_applied: {
          type: 'object',
          additionalProperties: { type: 'array', items: { type: 'string' } },
          description: 'The filters used, including `state: [""]` when only national rows were read.',
        },
        row_count: { type: 'integer', minimum: 0, description: 'Groups in this page.' },
        release: releaseId,
      },
      {
        omitted: {
          type: 'array',
          description: 'Without `measure`: default measures left out because they cannot be combined here, and why.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['measure', 'reason'],
            properties: { measure: { type: 'string' }, reason: { type: 'string' } },
          },
        },
        compare: { enum: [...COMPARES], description: 'The comparison applied.' },
        share: { type: 'string', description: 'The share applied: `all` or a group_by dimension.' },
        per: {
          type: 'object',
          additionalProperties: false,
          required: ['metric', 'dataset', 'keys'],
          description: 'The denominator applied: its metric, the dataset holding it and the keys a row is matched on.',
          properties: {
            metric: { enum: [...DENOMINATOR_NAMES] },
            dataset: { type: 'string' },
            keys: { type: 'array', items: { type: 'string' } },
          },
        },
        having: { type: 'array', items: { type: 'string' }, description: 'The having conditions applied, as sent.' },
        ...SERIES_META,
        unmatched: {
          type: 'object',
          additionalProperties: false,
          required: ['count', 'keys'],
          description:
            "With `per`: the keys of the groups' rows that have no denominator row (those groups' ratios are null), counted, and the first ten by value.",
          properties: {
            count: { type: 'integer', minimum: 0 },
            keys: { type: 'array', maxItems: 10, items: { type: 'object', additionalProperties: { type: ['string', 'integer'] } } },
          },
        },
        warnings,
      },
    ),
  },
};
