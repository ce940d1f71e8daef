import * as v from 'valibot';
import { InvalidCursorError, InvalidParametersError } from '../../errors/index.ts';
import { findDataset } from '../../registry.ts';
import { envelope, releaseId, rowOf } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { PREFER_WAIT, queryParameters, referenceSets } from '../openapi/parameters.ts';
import { keyedErrors, missingParameters, pageResponses, releaseResponses } from '../openapi/responses.ts';
import { datasetParam, unknownDataset } from '../params/metric.ts';
import { cursorParam, formatParam, limitParam, parseQuery, releaseParam, unknownKeys } from '../params/params.ts';
import { PAGE_FORMATS } from '../respond/negotiate.ts';
import { respondWithPage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/reference: one keyset page of a reference dataset's rows (spec 2.3).

export const schema = v.object({
  dataset: datasetParam('dataset', 'reference'),
  limit: limitParam(100),
  cursor: cursorParam,
  format: formatParam(PAGE_FORMATS),
  release: releaseParam,
});

const UNKNOWN_PARAMETER = 'Unknown parameter: /v1/reference accepts dataset, limit, cursor, format and release';

export const reference: Route = {
  path: '/v1/reference',
  async handle(ctx, services) {
    const unknown = unknownKeys(ctx.query, (key) => Object.hasOwn(schema.entries, key));
    if (unknown.length) throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, [UNKNOWN_PARAMETER]])));
    const { dataset, limit, cursor, format, release } = parseQuery(schema, ctx.query);
    const def = findDataset(dataset, 'reference');
    if (!def) throw unknownDataset(dataset);
    await respondWithPage(ctx, services, {
      dataset: def.name,
      filters: new Map(),
      limit,
      cursor,
      release,
      format,
      meta: (rowCount) => ({ dataset: def.name, row_count: rowCount }),
    });
  },
  operation: {
    operationId: 'getReference',
    tags: ['data'],
    summary: 'Query a reference dataset',
    description: 'Flat rows of a reference dataset. Any parameter other than dataset, limit, cursor, format and release is refused.',
    parameters: [...queryParameters(schema), PREFER_WAIT],
    'x-codeSamples': exampleRequest('/v1/reference?dataset=country_reference&limit=3'),
    responses: {
      ...pageResponses('ReferenceResponse'),
      ...keyedErrors({
        missingDataset: missingParameters(schema),
        unknownDataset: unknownDataset('countries'),
        financialDataset: unknownDataset('ggr'),
        unknownParameter: new InvalidParametersError({ country: [UNKNOWN_PARAMETER] }),
        invalidCursor: new InvalidCursorError(),
      }),
      ...releaseResponses(),
    },
  },
  schemas: {
    ReferenceResponse: envelope(rowOf(referenceSets), {
      dataset: { enum: referenceSets.map((d) => d.name) },
      row_count: { type: 'integer', minimum: 0 },
      release: releaseId,
    }),
  },
};
