import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { DENOMINATORS } from '../../../registry.ts';
import { asOfMeta, releaseId } from '../components.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, ref, releaseResponses } from '../responses.ts';

// GET /v1/catalog in the document.

export const catalogOperation = (endpoint: Endpoint) => ({
  operationId: 'getCatalog',
  tags: ['data'],
  summary: 'List every dataset',
  description:
    "Every dataset with its name, description, dimensions and metrics (spec 2.1), the denominators `per` on /v1/aggregate may divide its sums by, and, once a release is loaded, the release served (or the one `release` names) and each dataset's row count and first and last year. Other parameters are ignored.",
  responses: {
    200: {
      description: 'The catalog (JSON only; Accept is not negotiated here).',
      headers: headerRefs([...LIMIT_HEADERS, 'ETag']),
      content: { 'application/json': { schema: ref('CatalogResponse') } },
    },
    304: { description: 'If-None-Match holds the ETag.', headers: headerRefs(LIMIT_HEADERS) },
    ...keyedErrors(optionErrors(endpoint)),
    ...releaseResponses(),
  },
});

export const CATALOG_SCHEMAS = {
  CatalogResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['datasets', 'dimensions', 'derived'],
    properties: {
      dimensions: {
        type: 'object',
        description:
          "Each dimension's meaning; for a vocabulary, each value's meaning too (`values_listed`: `all` for a closed vocabulary, `some` where other values occur, such as ISO currency codes).",
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          required: ['description'],
          properties: {
            description: { type: 'string' },
            values: { type: 'object', additionalProperties: { type: 'string' } },
            values_listed: { enum: ['all', 'some'] },
          },
        },
      },
      derived: {
        type: 'object',
        description:
          'What each derived key /v1/aggregate may add to a measure key holds, and its unit: every ratio (`_pct_change`, `_share`, `_per_<metric>`, `_cagr`) is a plain fraction; `_index` is 100 in the base year.',
        additionalProperties: { type: 'string' },
      },
      as_of: asOfMeta,
      // Absent only while the first release loads.
      release: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'published_at', 'synthetic'],
        properties: { id: releaseId, published_at: { type: 'string', format: 'date-time' }, synthetic: { type: 'boolean' } },
      },
      datasets: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['name', 'description', 'dimensions', 'metrics'],
          properties: {
            name: { type: 'string' },
            description: { type: 'string' },
            dimensions: { type: 'array', items: { type: 'string' } },
            metrics: { type: 'array', items: { type: 'string' } },
            units_from: {
              type: 'object',
              description:
                "Each metric whose rows are in different units, and the dimension naming each row's unit (ggr's `fx`, the currency): /v1/aggregate adds its values within one value of that dimension, fixed by a filter or by grouping by it.",
              additionalProperties: { type: 'string' },
            },
            per: {
              type: 'array',
              description:
                "The denominators `per=` on /v1/aggregate divides this dataset's sums by: the metric, the dataset holding it, the keys a row is matched on, the unit the numerator must be in, and what the ratio means.",
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['metric', 'dataset', 'keys', 'means'],
                properties: {
                  metric: { enum: Object.keys(DENOMINATORS) },
                  dataset: { type: 'string' },
                  keys: { type: 'array', items: { type: 'string' } },
                  numerator_unit: { type: 'string' },
                  means: { type: 'string' },
                },
              },
            },
            row_count: { type: 'integer', minimum: 0 },
            first_year: { type: 'integer' },
            last_year: { type: 'integer' },
          },
        },
      },
    },
  },
};
