import {
  ExportLimitError,
  ExportsOpenError,
  HeavyBudgetError,
  RangeNotSatisfiableError,
  TooManyRequestsError,
} from '../../../errors/index.ts';
import { type Endpoint, optionErrors } from '../../../query/options/endpoint.ts';
import { EXPORT_FORMATS, FORMATS } from '../../../render/formats.ts';
import { notAcceptable } from '../../respond/negotiate.ts';
import { errorResponse, headerRefs, keyedErrors, LIMIT_HEADERS, releaseResponses } from '../responses.ts';

// GET /v1/export in the document.

const mediaTypes = EXPORT_FORMATS.map((f) => FORMATS[f].mediaType);

export const exportOperation = (endpoint: Endpoint) => ({
  operationId: 'getExport',
  tags: ['data'],
  summary: 'Every matching row of a financial dataset in one file',
  description: `The rows /v1/financials would page for the same filters and release, in the same order, as flat columns (the dimensions, then the metrics; \`year\` INTEGER, metrics DOUBLE), in one response. \`format\` (${EXPORT_FORMATS.join(', ')}) or else \`Accept\` picks the file: ${mediaTypes.map((t) => `\`${t}\``).join(', ')}; none or \`*/*\` is Parquet. Counts one request and one export of the key's daily export budget. Unfiltered Parquet is the release's own published file: ETag, 304, and \`Range\` for resumable downloads.`,
  responses: {
    200: {
      description: 'The whole export.',
      headers: headerRefs([
        ...LIMIT_HEADERS,
        'X-Export-Limit',
        'X-Export-Remaining',
        'X-Export-Reset',
        'Content-Disposition',
        'Cache-Control',
      ]),
      content: Object.fromEntries(mediaTypes.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
    },
    206: {
      description: "The byte range asked for of the release's own Parquet file (unfiltered Parquet only).",
      headers: headerRefs([...LIMIT_HEADERS, 'Content-Range', 'Accept-Ranges', 'ETag', 'Content-Disposition']),
      content: { 'application/vnd.apache.parquet': { schema: { type: 'string', contentMediaType: 'application/vnd.apache.parquet' } } },
    },
    304: { description: "If-None-Match holds the whole file's ETag.", headers: headerRefs([...LIMIT_HEADERS, 'ETag']) },
    406: errorResponse(
      '`Accept` names no export format, and no `format` chose one.',
      { notAcceptable: notAcceptable(EXPORT_FORMATS) },
      headerRefs(LIMIT_HEADERS),
    ),
    416: errorResponse(
      '`Range` starts past the end of the file.',
      { rangeNotSatisfiable: new RangeNotSatisfiableError(1234) },
      headerRefs(LIMIT_HEADERS),
    ),
    ...keyedErrors(optionErrors(endpoint)),
    429: errorResponse(
      "A rate limit (spec 8), the key's daily export budget or its heavy-seconds budget is spent, or the key has EXPORTS_OPEN_PER_KEY exports still open; retry after `Retry-After` seconds.",
      {
        limited: new TooManyRequestsError(42),
        exportLimited: new ExportLimitError(50, 3600),
        exportsOpen: new ExportsOpenError(2, 10),
        heavyBudget: new HeavyBudgetError(60, 12),
      },
      headerRefs([...LIMIT_HEADERS, 'Retry-After', 'X-Heavy-Remaining']),
    ),
    ...releaseResponses(),
  },
});
