import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { CHANGES } from '../../../query/revisions.ts';
import { FINANCIAL_DATASETS } from '../../../registry.ts';
import { envelope, releaseId } from '../components.ts';
import { keyedErrors, pageResponses, ref, releaseResponses, wholeAnswerLimits } from '../responses.ts';

// GET /v1/revisions in the document.

export const revisionsOperation = (endpoint: Endpoint) => ({
  operationId: 'getRevisions',
  tags: ['data'],
  summary: 'Rows of a financial dataset that differ between two published releases',
  description:
    'Rows matched by their dimension values: `added` (only in `to`), `removed` (only in `from`) or `changed` (any metric differs), with their values in each release. Takes every filter of /v1/financials. Pages follow the dimension values in order; one walk computes the diff once. CSV and Arrow without `limit` are the whole diff in one streamed answer, charged as one export.',
  responses: {
    ...pageResponses(
      'RevisionsResponse',
      {
        csv: 'RFC 4180 CSV with a header row: the dimensions, `change`, then `before_<metric>` and `after_<metric>` per metric; empty where the row is absent. Without `limit`: every row of the diff.',
        arrow:
          'Arrow IPC stream: text dimensions and `change` Utf8, `year` Int32, values Float64; null where the row is absent. Without `limit`: every row of the diff, a record batch per 4,096, every field nullable.',
      },
      {
        description:
          'CSV and Arrow without `limit`: every row of the diff, streamed as `/v1/export` streams and charged as one export (`X-Export-*`, `Content-Disposition`; no ETag), with no `Link`.',
        streamed: true,
      },
    ),
    ...keyedErrors(optionErrors(endpoint)),
    429: wholeAnswerLimits(),
    ...releaseResponses(),
  },
});

export const REVISIONS_SCHEMAS = {
  RevisionRow: {
    type: 'object',
    additionalProperties: false,
    required: ['dimensions', 'change', 'before', 'after'],
    properties: {
      dimensions: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
      change: { enum: [...CHANGES] },
      before: {
        type: ['object', 'null'],
        description: 'The metrics in `from`; null for an added row.',
        additionalProperties: { type: 'number' },
      },
      after: {
        type: ['object', 'null'],
        description: 'The metrics in `to`; null for a removed row.',
        additionalProperties: { type: 'number' },
      },
    },
  },
  RevisionsResponse: envelope(
    ref('RevisionRow'),
    {
      dataset: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      metric: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      from: releaseId,
      to: releaseId,
      filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      row_count: { type: 'integer', minimum: 0, description: 'Rows in this page.' },
    },
    {
      change: {
        type: 'array',
        items: { enum: [...CHANGES] },
        description: 'The kinds of change asked for, when `change` was given.',
      },
    },
  ),
};
