import { HISTORY_CHANGES, OUTPUTS, SHAPES } from '../../../query/history.ts';
import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { FINANCIAL_DATASETS } from '../../../registry.ts';
import { envelope, releaseId } from '../components.ts';
import { keyedErrors, pageResponses, ref, releaseResponses, wholeAnswerLimits } from '../responses.ts';

// GET /v1/history in the document.

export const historyOperation = (endpoint: Endpoint) => ({
  operationId: 'getHistory',
  tags: ['data'],
  summary: 'Each observation of a financial dataset release after release: its changes, its first published value, or every vintage',
  description:
    "An observation is one row's dimension values (`year` included), as in /v1/revisions. `output=changes` gives a row per observation and release where it was `added`, `changed` or `removed`, valid from that release to `valid_to`, the next release where that value no longer held (null while it holds); `output=first` its first published value and `first_release`; `output=all` its values in each release of the range (`shape=wide`: a column per metric and release). Validity is computed over every published release, never clipped to the range; releases a rollback withdrew are left out, and `meta.withdrawn` names them. Takes every filter of /v1/financials. CSV and Arrow without `limit` are the whole history in one streamed answer, charged as one export.",
  responses: {
    ...pageResponses(
      'HistoryResponse',
      {
        csv: 'RFC 4180 CSV with a header row: the dimensions, then `change`, `valid_from`, `valid_to` (changes), `first_release` (first) or `release` (all, long), then a column per metric (`<metric>_<release>` per release with `shape=wide`); empty where there is no value. Without `limit`: every row of the history.',
        arrow:
          'Arrow IPC stream of the same columns: text Utf8, `year` Int32, values Float64; null where there is no value. Without `limit`: every row of the history, a record batch per 4,096, every field nullable.',
      },
      {
        description:
          'CSV and Arrow without `limit`: every row of the history, streamed as `/v1/export` streams and charged as one export (`X-Export-*`, `Content-Disposition`; no ETag), with no `Link`.',
        streamed: true,
      },
    ),
    ...keyedErrors(optionErrors(endpoint)),
    429: wholeAnswerLimits(),
    ...releaseResponses(),
  },
});

const nullableRelease = { anyOf: [releaseId, { type: 'null' }] };

export const HISTORY_SCHEMAS = {
  HistoryRow: {
    type: 'object',
    additionalProperties: false,
    required: ['dimensions', 'values'],
    properties: {
      dimensions: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
      change: { enum: [...HISTORY_CHANGES], description: '`output=changes`: what happened to the observation in `valid_from`.' },
      valid_from: { ...releaseId, description: '`output=changes`: the release this version was published in.' },
      valid_to: {
        ...nullableRelease,
        description: '`output=changes`: the next release in which this version no longer held; null while it holds.',
      },
      first_release: { ...releaseId, description: '`output=first`: the release the observation was first published in.' },
      release: { ...releaseId, description: '`output=all`, `shape=long`: the release of these values.' },
      values: {
        type: ['object', 'null'],
        description:
          'The metrics; null for a `removed` row. With `shape=wide`, `<metric>_<release>` for each release of the range, null where the observation has no row.',
        additionalProperties: { type: ['number', 'null'] },
      },
    },
  },
  HistoryResponse: envelope(ref('HistoryRow'), {
    dataset: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
    metric: { enum: FINANCIAL_DATASETS.map((d) => d.name) },
    from: releaseId,
    to: releaseId,
    releases: { type: 'array', items: releaseId, description: 'The published releases from `from` to `to`, in publication order.' },
    output: { enum: [...OUTPUTS] },
    shape: { enum: [...SHAPES] },
    withdrawn: {
      type: 'array',
      description: 'Releases a rollback withdrew, newest first: left out of every history.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'withdrawn_at'],
        properties: { id: releaseId, withdrawn_at: { type: 'string', format: 'date-time' } },
      },
    },
    filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    row_count: { type: 'integer', minimum: 0, description: 'Rows in this page.' },
  }),
};
