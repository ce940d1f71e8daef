import * as v from 'valibot';
import { InvalidCursorError, InvalidFilterDimensionError, InvalidParametersError, UnknownMetricError } from '../../errors.ts';
import { findDataset } from '../../registry.ts';
import { envelope, releaseId } from '../openapi/components.ts';
import { financialParameters, financialSets } from '../openapi/parameters.ts';
import { keyedErrors, pageResponses, unknownRelease } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { cursorParam, formatParam, limitParam, parseQuery, periodParam, releaseParam, single } from '../params/params.ts';
import { PAGE_FORMATS } from '../respond/negotiate.ts';
import { respondWithPage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/financials: one keyset page of a financial dataset's rows (spec 2.2).

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
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
    const def = findDataset(metric, 'financial');
    if (!def) throw new UnknownMetricError(metric);
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
    parameters: financialParameters(schema),
    responses: {
      ...pageResponses('FinancialResponse'),
      ...keyedErrors({
        missingMetric: new InvalidParametersError({ metric: ['Invalid type: Expected string but received undefined'] }),
        badPeriod: new InvalidParametersError({ period: ['Expected format: YYYY-MM-DD:YYYY-MM-DD'] }),
        unknownMetric: new UnknownMetricError('revenue'),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fx.dimensions),
        invalidCursor: new InvalidCursorError(),
      }),
      ...unknownRelease(),
    },
  },
  schemas: {
    FinancialResponse: envelope(financialSets, {
      dataset: { enum: financialSets.map((d) => d.name) },
      metric: { enum: financialSets.map((d) => d.name) },
      filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      row_count: { type: 'integer', minimum: 0 },
      release: releaseId,
    }),
  },
};
