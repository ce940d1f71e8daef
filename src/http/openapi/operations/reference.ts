import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { REFERENCE_DATASETS } from '../../../registry.ts';
import { asOfMeta, envelope, releaseId, rowOf } from '../components.ts';
import { keyedErrors, pageResponses, releaseResponses } from '../responses.ts';

// GET /v1/reference in the document.

export const referenceOperation = (endpoint: Endpoint) => ({
  operationId: 'getReference',
  tags: ['data'],
  summary: 'Query a reference dataset',
  description: `Flat rows of a reference dataset. Any parameter other than ${Object.keys(endpoint.options).join(', ')} is refused.`,
  responses: {
    ...pageResponses('ReferenceResponse'),
    ...keyedErrors(optionErrors(endpoint)),
    ...releaseResponses(),
  },
});

export const REFERENCE_SCHEMAS = {
  ReferenceResponse: envelope(
    rowOf(REFERENCE_DATASETS),
    {
      dataset: { enum: REFERENCE_DATASETS.map((d) => d.name) },
      row_count: { type: 'integer', minimum: 0 },
      release: releaseId,
    },
    { as_of: asOfMeta },
  ),
};
