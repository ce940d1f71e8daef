import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { FINANCIAL_DATASETS } from '../../../registry.ts';
import { asOfMeta, releaseId, warnings } from '../components.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, releaseResponses } from '../responses.ts';

// GET /v1/facets in the document.

export const facetsOperation = (endpoint: Endpoint) => ({
  operationId: 'getFacets',
  tags: ['data'],
  summary: "Each dimension's values and their row counts",
  description:
    "For each dimension of a financial dataset, the values that have rows under the request's filters, with their row counts. Each dimension's counts apply every filter except that dimension's own (a `year` filter and `period` are the year's own), so a request with `country=France` still lists the other countries with the rows each would add. Values come most rows first, then by value; at most FACET_VALUES (default 50) per dimension, `meta.values_left_out` says how many more each has. Same key, limits, `release=` and errors as /v1/financials.",
  responses: {
    200: {
      description: "Every dimension of the dataset, each with its values' row counts.",
      headers: { ...headerRefs(LIMIT_HEADERS), ...headerRefs(['ETag', 'Cache-Control', 'Vary', 'X-Heavy-Remaining']) },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/FacetsResponse' } } },
    },
    304: { description: "If-None-Match holds this representation's ETag.", headers: headerRefs([...LIMIT_HEADERS, 'ETag']) },
    ...keyedErrors(optionErrors(endpoint)),
    ...releaseResponses(),
  },
});

export const FACETS_SCHEMAS = {
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
          dataset: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
          metric: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
          filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          facet_values: { type: 'integer', minimum: 1, description: 'FACET_VALUES: the most values listed per dimension.' },
          values_left_out: {
            type: 'object',
            additionalProperties: { type: 'integer', minimum: 0 },
            description: 'Per dimension, how many values with rows are not listed.',
          },
          release: releaseId,
          as_of: asOfMeta,
          totals_rule: {
            type: 'object',
            additionalProperties: false,
            required: ['dimension', 'value', 'means'],
            description:
              "With endpoint=aggregate, when the aggregate's national-totals rule applies: only the rows whose `dimension` is `value` (what they are: `means`) were counted.",
            properties: { dimension: { type: 'string' }, value: { type: 'string' }, means: { type: 'string' } },
          },
          warnings,
        },
      },
    },
  },
};
