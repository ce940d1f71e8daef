import * as v from 'valibot';
import { InvalidCursorError, InvalidFilterDimensionError, InvalidParametersError } from '../../errors/index.ts';
import { findDataset } from '../../registry.ts';
import { envelope, releaseId, rowOf, warnings } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters, financialSets, PREFER_WAIT } from '../openapi/parameters.ts';
import { keyedErrors, metricErrors, pageResponses, releaseResponses } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { datasetParam, financialDataset } from '../params/metric.ts';
import { cursorParam, formatParam, limitParam, parseQuery, periodParam, releaseParam } from '../params/params.ts';
import { PAGE_FORMATS } from '../respond/negotiate.ts';
import { respondWithPage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/financials: one keyset page of a financial dataset's rows (spec 2.2).

export const schema = v.objectWithRest(
  {
    metric: datasetParam('metric', 'financial'),
    period: periodParam,
    limit: limitParam(100),
    cursor: cursorParam,
    format: formatParam(PAGE_FORMATS),
    release: releaseParam,
    year: yearParam,
  },
  filterParams,
);

/** Parameters that shape the request rather than filter rows. */
const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor', 'format', 'release']);

const fx = findDataset('fx', 'financial')!;
const perMetric = financialSets.map((d) => `| ${d.name} | ${d.dimensions.join(', ')} | ${d.metrics.join(', ')} |`).join('\n');

export const financials: Route = {
  path: '/v1/financials',
  async handle(ctx, services) {
    const { metric, period, limit, cursor, format, release, ...params } = parseQuery(schema, ctx.query);
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
    const applied = filtersApplied(filters, period);
    await respondWithPage(ctx, services, {
      dataset: def.name,
      filters,
      period,
      limit,
      cursor,
      release,
      format,
      meta: (rowCount) => ({ dataset: def.name, metric: def.name, filters_applied: applied, row_count: rowCount }),
    });
  },
  operation: {
    operationId: 'getFinancials',
    tags: ['data'],
    summary: 'Query a financial dataset',
    description: `Rows of one financial dataset, filtered by its dimensions. A parameter that is not a dimension of the metric is the invalid-filter-dimension error. Dimensions and metrics per metric:\n\n| metric | dimensions | metrics |\n|---|---|---|\n${perMetric}`,
    parameters: [...financialParameters(schema), PREFER_WAIT],
    'x-codeSamples': exampleRequest('/v1/financials?metric=ggr&country=France&year=2024&limit=5'),
    responses: {
      ...pageResponses('FinancialResponse'),
      ...keyedErrors({
        ...metricErrors(schema),
        badPeriod: new InvalidParametersError({ period: ['Expected format: YYYY-MM-DD:YYYY-MM-DD'] }),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fx.dimensions),
        invalidCursor: new InvalidCursorError(),
      }),
      ...releaseResponses(),
    },
  },
  schemas: {
    FinancialResponse: envelope(
      rowOf(financialSets),
      {
        dataset: { enum: financialSets.map((d) => d.name) },
        metric: { enum: financialSets.map((d) => d.name) },
        filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
        row_count: { type: 'integer', minimum: 0 },
        release: releaseId,
      },
      { warnings },
    ),
  },
};
