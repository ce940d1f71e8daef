import * as v from 'valibot';
import { InvalidFilterDimensionError, InvalidParametersError } from '../../errors/index.ts';
import { countFacets } from '../../query/facets.ts';
import { canonicalScope } from '../../query/scope.ts';
import { unmatchedValues } from '../../query/unmatched.ts';
import { findDataset } from '../../registry.ts';
import { releaseId, warnings } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters, financialSets, PREFER_WAIT } from '../openapi/parameters.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, metricErrors, releaseResponses } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { datasetParam, financialDataset } from '../params/metric.ts';
import { parseQuery, periodParam, releaseParam } from '../params/params.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import { heavyWork } from '../respond/heavy-work.ts';
import { withRelease } from '../respond/request-release.ts';
import type { Route } from './route.ts';

// GET /v1/facets: each dimension's values that have rows under the filters, with their
// row counts, every filter applied but the dimension's own (docs/api.md "Facets").
// The counts are heavy work (one GROUP BY per dimension over the release's rows) and
// their answer is cached as any other.

export const schema = v.objectWithRest(
  {
    metric: datasetParam('metric', 'financial'),
    period: periodParam,
    release: releaseParam,
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'release']);

const fx = findDataset('fx', 'financial')!;

export const facets: Route = {
  path: '/v1/facets',
  async handle(ctx, services) {
    const { metric, period, release: asked, ...params } = parseQuery(schema, ctx.query);
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
    await withRelease(ctx, services, { release: asked }, async (release) => {
      const served = release.datasets.get(def.name)!;
      const max = services.facetValues;
      const scope = canonicalScope({ release: release.id, dataset: def.name, filters, period: period?.text });
      const render = async () => {
        const counted = await heavyWork(ctx, services, 'facets', (signal) =>
          countFacets(services.db, served, filters, period?.years, max, signal),
        );
        const unmatched = unmatchedValues(served, filters);
        const meta = {
          dataset: def.name,
          metric: def.name,
          filters_applied: filtersApplied(filters, period),
          facet_values: max,
          values_left_out: counted.leftOut,
          release: release.id,
          ...(unmatched.length > 0 && { warnings: unmatched }),
        };
        return { body: Buffer.from(JSON.stringify({ data: counted.values, meta })) };
      };
      await respondCacheable(ctx, services, {
        key: JSON.stringify(['facets', max, ...scope]),
        contentType: 'application/json; charset=utf-8',
        render,
        release: release.id,
      });
    });
  },
  operation: {
    operationId: 'getFacets',
    tags: ['data'],
    summary: "Each dimension's values and their row counts",
    description:
      "For each dimension of a financial dataset, the values that have rows under the request's filters, with their row counts. Each dimension's counts apply every filter except that dimension's own (a `year` filter and `period` are the year's own), so a request with `country=France` still lists the other countries with the rows each would add. Values come most rows first, then by value; at most FACET_VALUES (default 50) per dimension, `meta.values_left_out` says how many more each has. Same key, limits, `release=` and errors as /v1/financials.",
    parameters: [...financialParameters(schema), PREFER_WAIT],
    'x-codeSamples': exampleRequest('/v1/facets?metric=ggr&country=France&year=2024'),
    responses: {
      200: {
        description: "Every dimension of the dataset, each with its values' row counts.",
        headers: { ...headerRefs(LIMIT_HEADERS), ...headerRefs(['ETag', 'Cache-Control', 'Vary', 'X-Heavy-Remaining']) },
        content: { 'application/json': { schema: { $ref: '#/components/schemas/FacetsResponse' } } },
      },
      304: { description: "If-None-Match holds this representation's ETag.", headers: headerRefs([...LIMIT_HEADERS, 'ETag']) },
      ...keyedErrors({
        ...metricErrors(schema),
        badPeriod: new InvalidParametersError({ period: ['Expected format: YYYY-MM-DD:YYYY-MM-DD'] }),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fx.dimensions),
      }),
      ...releaseResponses(),
    },
  },
  schemas: {
    FacetsResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['data', 'meta'],
      properties: {
        data: {
          type: 'object',
          description: "One property per dimension of the dataset: its values with rows under the other dimensions' filters.",
          additionalProperties: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['value', 'rows'],
              properties: { value: { type: ['string', 'integer'] }, rows: { type: 'integer', minimum: 1 } },
            },
          },
        },
        meta: {
          type: 'object',
          additionalProperties: false,
          required: ['dataset', 'metric', 'filters_applied', 'facet_values', 'values_left_out', 'release'],
          properties: {
            dataset: { enum: financialSets.map((d) => d.name) },
            metric: { enum: financialSets.map((d) => d.name) },
            filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            facet_values: { type: 'integer', minimum: 1, description: 'FACET_VALUES: the most values listed per dimension.' },
            values_left_out: {
              type: 'object',
              additionalProperties: { type: 'integer', minimum: 0 },
              description: 'Per dimension, how many values with rows are not listed.',
            },
            release: releaseId,
            warnings,
          },
        },
      },
    },
  },
};
