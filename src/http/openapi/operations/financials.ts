import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { FINANCIAL_DATASETS } from '../../../registry.ts';
import { asOfMeta, envelope, releaseId, rowOf, warnings } from '../components.ts';
import { keyedErrors, pageResponses, releaseResponses } from '../responses.ts';

// GET /v1/financials in the document: what it answers, and its errors beyond its options'.

const perMetric = FINANCIAL_DATASETS.map((d) => `| ${d.name} | ${d.dimensions.join(', ')} | ${d.metrics.join(', ')} |`).join('\n');

export const financialsOperation = (endpoint: Endpoint) => ({
  operationId: 'getFinancials',
  tags: ['data'],
  summary: 'Query a financial dataset',
  description: `Rows of one financial dataset, filtered by its dimensions. A parameter that is not a dimension of the metric is the invalid-filter-dimension error. Dimensions and metrics per metric:\n\n| metric | dimensions | metrics |\n|---|---|---|\n${perMetric}`,
  responses: {
    ...pageResponses('FinancialResponse'),
    ...keyedErrors(optionErrors(endpoint)),
    ...releaseResponses(),
  },
});

export const FINANCIALS_SCHEMAS = {
  FinancialResponse: envelope(
    rowOf(FINANCIAL_DATASETS),
    {
      dataset: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      metric: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
      filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      row_count: { type: 'integer', minimum: 0 },
      release: releaseId,
    },
    { warnings, as_of: asOfMeta },
  ),
};
