import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import {
  ApiError,
  DuplicateKeyHeaderError,
  InternalError,
  InvalidCursorError,
  InvalidFilterDimensionError,
  InvalidGroupByError,
  InvalidKeyError,
  InvalidMeasureError,
  InvalidOrderError,
  MixedTotalsError,
  MixedUnitsError,
  RateSumError,
  TooManyGroupsError,
  InvalidParametersError,
  KeysUnavailableError,
  MissingKeyError,
  NotAcceptableError,
  NotReadyError,
  QueryTooLongError,
  ReleaseLoadingError,
  ExportLimitError,
  RangeNotSatisfiableError,
  ReleaseUnavailableError,
  UnknownReleaseError,
  TooManyRequestsError,
  UnknownDatasetError,
  UnknownMetricError,
} from '../errors.ts';
import { DATASETS, INTEGER_DIMENSIONS, metricDef, type DatasetDef } from '../registry.ts';
import { defaultFunction, FUNCTIONS, MAX_GROUP_BY } from '../query/aggregate.ts';
import * as aggregate from './aggregate.ts';
import * as financials from './financials.ts';
import { FORMATS } from './formats.ts';
import { QUERY_LIMITS } from './query-guard.ts';
import * as reference from './reference.ts';
import * as revisions from './revisions.ts';
import * as catalog from './catalog.ts';
import * as exporter from './export.ts';
import { EXPORT_FORMATS } from './export-formats.ts';
import { CHANGES } from '../query/revisions.ts';

// The OpenAPI 3.1 description of the public API, built from what the code runs on: the
// registry (datasets, per-metric dimensions, row shapes), the handlers' valibot
// schemas (parameters, patterns, which are required) and the error catalog (every
// error body, as an example made by the class that sends it). docs/openapi.json is
// this document, kept equal by test/openapi.test.ts.

type Json = Record<string, unknown>;

const financialSets = DATASETS.filter((d) => d.kind === 'financial');
const referenceSets = DATASETS.filter((d) => d.kind === 'reference');
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A handler schema's parameters as JSON Schema, required ones named by what the schema refuses when absent. */
function queryParameters(schema: v.GenericSchema & { entries: Record<string, v.GenericSchema> }) {
  const converted = toJsonSchema(schema, { errorMode: 'ignore' }) as { properties: Record<string, Json> };
  const missing = v.safeParse(schema, {});
  const required = new Set(missing.success ? [] : missing.issues.map((issue) => String(issue.path?.[0]?.key)));
  return Object.entries(converted.properties).map(([name, property]) => {
    // repeatable(): a parameter that may repeat is a form-exploded array (`country=A&country=B`).
    const repeats = Array.isArray(property.anyOf);
    const { anyOf: _anyOf, type: _type, items, default: fallback, ...rest } = property;
    const itemSchema = repeats ? (items as Json) : { type: 'string', ...rest };
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(repeats ? { style: 'form', explode: true } : {}),
      schema: repeats ? { type: 'array', items: itemSchema } : fallback === undefined ? itemSchema : { ...itemSchema, default: fallback },
    };
  });
}

/** The first value of a valibot action of `type` anywhere in `schema`'s pipes (e.g. limit's bounds). */
function actionRequirement(schema: unknown, type: string): unknown {
  const node = schema as { type?: string; requirement?: unknown; pipe?: unknown[]; wrapped?: unknown };
  if (node.type === type && 'requirement' in node) return node.requirement;
  for (const child of [...(node.pipe ?? []).slice(node.pipe ? 1 : 0), node.wrapped]) {
    if (!child) continue;
    const found = actionRequirement(child, type);
    if (found !== undefined) return found;
  }
  return undefined;
}

function describeParameters(parameters: ReturnType<typeof queryParameters>, descriptions: Record<string, string>) {
  return parameters.map((p) => {
    if (p.name === 'limit') {
      const limit = financials.schema.entries.limit;
      const minimum = actionRequirement(limit, 'min_value');
      const maximum = actionRequirement(limit, 'max_value');
      return { ...p, description: descriptions.limit, schema: { type: 'integer', minimum, maximum, default: Number((p.schema as Json).default) } };
    }
    return { ...p, description: descriptions[p.name] };
  });
}

const CONTROL_DESCRIPTIONS = {
  metric: `Financial dataset: ${financialSets.map((d) => d.name).join(', ')} (GET /v1/catalog lists them). Given once.`,
  dataset: `Reference dataset: ${referenceSets.map((d) => d.name).join(', ')}. Given once.`,
  period: 'Keeps rows whose calendar year overlaps `YYYY-MM-DD:YYYY-MM-DD` (rows are annual). Given once.',
  limit: 'Rows per page. Given once.',
  cursor: 'Opaque cursor of the next page: `pagination.cursor` of the previous JSON page, or its `X-Next-Cursor` header. Keep the other parameters the same.',
  release: 'A published release `YYYY-MM` to read instead of the current one (GET /v1/releases lists them). Its answers never change: they are cached as immutable. Given once.',
};

const REVISION_DESCRIPTIONS = {
  from: 'The earlier release `YYYY-MM`; by default the one published before `to`. Given once.',
  to: 'The later release `YYYY-MM`; by default the current one. Given once.',
  change: `Only rows of these kinds: ${CHANGES.join(', ')}; repeat for several.`,
  year: 'Filter by integer year; repeat for several values. Applies to every metric.',
};

const AGGREGATE_DESCRIPTIONS = {
  limit: 'Groups per page. Given once.',
  group_by: `Dimensions to group by, repeated or comma-separated, at most ${MAX_GROUP_BY}: their order is the column order and the default sort order.`,
  measure: `\`<metric>:<fn>\` with fn one of ${FUNCTIONS.join(', ')}, or \`<metric>\` for its default (sum, or avg for a rate); repeat for several. Without it: every metric of the dataset with its default, less those that cannot be combined here (named in \`meta.omitted\`).`,
  order: 'A group_by dimension, a measure key (`ggr_sum`) or `rows`; a leading `-` sorts descending. Ties, and the default, follow the group_by values in order. Given once.',
  rollup: '`true` adds subtotal rows (GROUP BY ROLLUP over group_by, in order) and a grand total; a rolled-up dimension is null. Given once.',
  year: 'Filter by integer year; repeat for several values. Applies to every metric.',
};

/** Each metric's kind, unit, default function and what combining it needs (the registry's METRICS); docs/api.md holds it too. */
export function metricsTable(): string {
  const rows = financialSets.flatMap((d) =>
    d.metrics.map((m) => {
      const def = metricDef(m);
      const needs = [def.kind === 'rate' ? 'no sum (a rate)' : '', def.unitFrom ? `one ${def.unitFrom.dimension}, filtered or grouped` : ''].filter(Boolean).join('; ');
      return `| ${m} | ${d.name} | ${def.kind} | ${def.unit} | ${defaultFunction(m)} | ${needs || '—'} |`;
    }),
  );
  return ['| metric | dataset | kind | unit | default | to combine rows |', '|---|---|---|---|---|---|', ...rows].join('\n');
}

/** One parameter per dimension of any financial dataset, saying which metrics take it. */
function dimensionParameters(known: ReadonlySet<string>) {
  const dimensions = [...new Set(financialSets.flatMap((d) => d.dimensions))].filter((d) => !known.has(d));
  return dimensions.map((dimension) => {
    const metrics = financialSets.filter((d) => d.dimensions.includes(dimension)).map((d) => d.name);
    return {
      name: dimension,
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: `Filter by ${dimension}; repeat for several values (OR). Applies to metric ${metrics.join(', ')}; with any other metric it is the invalid-filter-dimension error.`,
      'x-metrics': metrics,
      schema: { type: 'array', items: { type: 'string' } },
    };
  });
}

function rowSchema(def: DatasetDef): Json {
  const dimensions = {
    type: 'object',
    additionalProperties: false,
    required: [...def.dimensions],
    properties: Object.fromEntries(def.dimensions.map((d) => [d, { type: INTEGER_DIMENSIONS.has(d) ? 'integer' : 'string' }])),
  };
  if (def.kind === 'reference') return { ...dimensions, description: `A ${def.name} row.` };
  return {
    type: 'object',
    description: `A ${def.name} row.`,
    additionalProperties: false,
    required: ['dimensions', 'values'],
    properties: {
      dimensions,
      values: { type: 'object', additionalProperties: false, required: [...def.metrics], properties: Object.fromEntries(def.metrics.map((m) => [m, { type: 'number' }])) },
    },
  };
}

const rowName = (def: DatasetDef) => `${def.name}Row`;

/** The id of a monthly release, as the serving release's manifest names it. */
const releaseId: Json = { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' };

/** A page's JSON envelope (spec 2.6): `meta` with exactly these fields, rows of `sets`, pagination. */
function envelope(sets: readonly DatasetDef[], meta: Record<string, Json>): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['meta', 'data', 'pagination'],
    properties: {
      meta: { type: 'object', additionalProperties: false, required: Object.keys(meta), properties: meta },
      data: { type: 'array', items: { anyOf: sets.map((d) => ref(rowName(d))) } },
      pagination: ref('Pagination'),
    },
  };
}

const HEADERS: Record<string, Json> = {
  'X-RateLimit-Limit': { required: true, description: 'Limit of the window with the least remaining (spec 8).', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Remaining': { required: true, description: 'Requests left in that window after this one.', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { required: true, description: 'Whole seconds until that window gives a request back (delta seconds).', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { required: true, description: 'Every window (draft-ietf-httpapi-ratelimit-headers-10), e.g. `"minute";q=100;w=60, "day";q=10000;w=86400`.', schema: { type: 'string' } },
  RateLimit: { required: true, description: 'Every window\'s remaining and reset, e.g. `"minute";r=99;t=60, "day";r=9999;t=40000`.', schema: { type: 'string' } },
  'Retry-After': { required: true, description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  ETag: { required: true, description: 'Strong tag of this representation (release, request, format and coding).', schema: { type: 'string' } },
  'Cache-Control': { required: true, description: '`private, max-age=…` on a 200 or 304 (`private, max-age=31536000, immutable` for a release other than the current one); `no-store` on an error.', schema: { type: 'string' } },
  Vary: { required: true, description: 'Request headers that select the representation.', schema: { type: 'string' } },
  Link: { description: 'While more pages follow: `<…&cursor=…>; rel="next"`, this request with the next cursor (root-relative).', schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' } },
  'X-Export-Limit': { required: true, description: 'Bulk exports this key may take per UTC day (EXPORT_LIMIT_PER_DAY).', schema: { type: 'integer', minimum: 0 } },
  'X-Export-Remaining': { required: true, description: 'Exports left today after this one.', schema: { type: 'integer', minimum: 0 } },
  'X-Export-Reset': { required: true, description: 'Whole seconds until an export comes back (the UTC day ends).', schema: { type: 'integer', minimum: 0 } },
  'Content-Disposition': { required: true, description: 'The file\'s name: `attachment; filename="ggr-2026-11.parquet"`.', schema: { type: 'string' } },
  'Accept-Ranges': { required: true, description: '`bytes`: the whole-file answer takes one `Range` to resume a download.', schema: { type: 'string' } },
  'Content-Range': { required: true, description: 'The bytes sent, `bytes a-b/size`.', schema: { type: 'string' } },
  'X-Next-Cursor': { description: 'CSV and Arrow only, while more pages follow: the next page\'s cursor.', schema: { type: 'string' } },
};

const LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];
/** References to the header components (which say whether each is required where it appears). */
const headerRefs = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** An error response with one example per catalog error that gives it. */
function errorResponse(description: string, errors: Record<string, ApiError>, headers: Json = {}): Json {
  return {
    description,
    headers,
    content: {
      'application/json': {
        schema: ref('Error'),
        examples: Object.fromEntries(Object.entries(errors).map(([name, err]) => [name, { value: err.body }])),
      },
    },
  };
}

/** The responses every keyed /v1 operation can give besides its own. */
function keyedErrors(extra400: Record<string, ApiError>): Json {
  const limits = headerRefs(LIMIT_HEADERS);
  return {
    400: errorResponse('Invalid request (spec 7.2).', {
      ...extra400,
      tooManyParameters: new InvalidParametersError({}, [`Too many query parameters: at most ${QUERY_LIMITS.maxParams}`]),
    }, limits),
    401: errorResponse('Missing, invalid or duplicated key (spec 5.3).', {
      missing: new MissingKeyError(),
      invalid: new InvalidKeyError(),
      duplicated: new DuplicateKeyHeaderError(),
    }, limits),
    414: errorResponse('Query string too long.', { tooLong: new QueryTooLongError(QUERY_LIMITS.maxBytes) }, limits),
    429: errorResponse('A rate limit is exceeded (spec 8); retry after `Retry-After` seconds.', { limited: new TooManyRequestsError(42) }, {
      ...limits,
      ...headerRefs(['Retry-After']),
    }),
    500: errorResponse('Unexpected failure.', { internal: new InternalError() }),
    503: errorResponse('Data is still loading, the key cannot be verified right now, or a release asked for is still loading or cannot be served.', {
      loading: new NotReadyError(),
      keys: new KeysUnavailableError(),
      releaseLoading: new ReleaseLoadingError('2026-09'),
      releaseUnavailable: new ReleaseUnavailableError('2026-09'),
    }, {
      ...headerRefs(['Retry-After']),
    }),
  };
}

/** For operations that take `release=`. */
const unknownRelease = () => ({ 404: errorResponse('`release` names no published release.', { unknownRelease: new UnknownReleaseError('1999-01') }, headerRefs(LIMIT_HEADERS)) });

/** What the request edge answers on any path, keyed or not (src/http/query-guard.ts). */
function edgeErrors(): Json {
  return {
    400: errorResponse('Too many query parameters.', { tooManyParameters: new InvalidParametersError({}, [`Too many query parameters: at most ${QUERY_LIMITS.maxParams}`]) }),
    414: errorResponse('Query string too long.', { tooLong: new QueryTooLongError(QUERY_LIMITS.maxBytes) }),
    500: errorResponse('Unexpected failure.', { internal: new InternalError() }),
  };
}

const ROW_BODIES = {
  csv: 'RFC 4180 CSV with a header row: dimension columns, then metric columns.',
  arrow: 'Arrow IPC stream: text dimensions dictionary-encoded, `year` Int32, metrics Float64.',
};

function pageResponses(envelope: string, text: { csv: string; arrow: string } = ROW_BODIES): Json {
  const limits = headerRefs(LIMIT_HEADERS);
  const caching = headerRefs(['ETag', 'Cache-Control', 'Vary']);
  const bodies: Record<string, Json> = {
    json: { schema: ref(envelope) },
    csv: { schema: { type: 'string', description: text.csv } },
    arrow: { schema: { type: 'string', contentMediaType: 'application/vnd.apache.arrow.stream', description: text.arrow } },
  };
  return {
    200: {
      description: 'One page, in the format `Accept` chose (JSON when there is none).',
      headers: { ...limits, ...caching, Link: { $ref: '#/components/headers/Link' }, 'X-Next-Cursor': { $ref: '#/components/headers/X-Next-Cursor' } },
      content: Object.fromEntries(FORMATS.map((f) => [f.mediaType, bodies[f.name]])),
    },
    304: { description: 'If-None-Match holds this representation\'s ETag.', headers: { ...limits, ETag: caching.ETag } },
    406: errorResponse('`Accept` names no format served.', { notAcceptable: new NotAcceptableError(FORMATS.map((f) => f.mediaType)) }, limits),
  };
}

export function openApiDocument(version: string): Json {
  const ggr = financialSets[0]!;
  const financialParams = describeParameters(queryParameters(financials.schema), { ...CONTROL_DESCRIPTIONS, year: `Filter by integer year; repeat for several values. Applies to every metric.` });
  const referenceParams = describeParameters(queryParameters(reference.schema), CONTROL_DESCRIPTIONS);
  const aggregateParams = describeParameters(queryParameters(aggregate.schema), { ...CONTROL_DESCRIPTIONS, ...AGGREGATE_DESCRIPTIONS });
  const revisionParams = describeParameters(queryParameters(revisions.schema), { ...CONTROL_DESCRIPTIONS, ...REVISION_DESCRIPTIONS });
  const exportParams = describeParameters(queryParameters(exporter.schema), { ...CONTROL_DESCRIPTIONS, year: REVISION_DESCRIPTIONS.year });
  const catalogParams = describeParameters(queryParameters(catalog.schema), CONTROL_DESCRIPTIONS);
  const fxDef = financialSets.find((d) => d.name === 'fx') ?? ggr;
  const perMetric = financialSets.map((d) => `| ${d.name} | ${d.dimensions.join(', ')} | ${d.metrics.join(', ')} |`).join('\n');
  const pagination = {
    type: 'object',
    additionalProperties: false,
    required: ['cursor', 'has_more'],
    properties: { cursor: { type: 'string', description: '`""` on the last page.' }, has_more: { type: 'boolean' } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'data-query-service',
      version,
      // Keys come from an operator's invite (spec 5.2): that operator is who clients ask.
      contact: { name: 'The operator who sent your invite link' },
      description:
        'Read-only API over gambling-industry financial data. Every /v1 request needs an `x-api-key` and counts against 100 requests a minute and 10,000 a day per key. Pages are keyset pages: follow `pagination.cursor` (JSON), `X-Next-Cursor` (CSV, Arrow) or `Link: rel="next"` (any format). Errors are JSON: `error`, and `details` for field errors. What changed, and when: [the changelog](/docs/changelog).',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'data', description: 'The datasets: rows, totals and the catalog. Every request needs `x-api-key` and counts against the limits.' },
      { name: 'operations', description: 'For orchestrators; no key.' },
      { name: 'documentation', description: 'This document, its page and the changelog; no key.' },
    ],
    security: [{ apiKey: [] }],
    paths: {
      '/v1/financials': {
        get: {
          operationId: 'getFinancials',
          tags: ['data'],
          summary: 'Query a financial dataset',
          description: `Rows of one financial dataset, filtered by its dimensions. A parameter that is not a dimension of the metric is the invalid-filter-dimension error. Dimensions and metrics per metric:\n\n| metric | dimensions | metrics |\n|---|---|---|\n${perMetric}`,
          parameters: [...financialParams, ...dimensionParameters(new Set(financialParams.map((p) => p.name)))],
          responses: {
            ...pageResponses('FinancialResponse'),
            ...keyedErrors({
              missingMetric: new InvalidParametersError({ metric: ['Invalid type: Expected string but received undefined'] }),
              badPeriod: new InvalidParametersError({ period: ['Expected format: YYYY-MM-DD:YYYY-MM-DD'] }),
              unknownMetric: new UnknownMetricError('revenue'),
              invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', financialSets.find((d) => d.name === 'fx')?.dimensions ?? ggr.dimensions),
              invalidCursor: new InvalidCursorError(),
            }),
            ...unknownRelease(),
          },
        },
      },
      '/v1/reference': {
        get: {
          operationId: 'getReference',
          tags: ['data'],
          summary: 'Query a reference dataset',
          description: 'Flat rows of a reference dataset. Any parameter other than dataset, limit and cursor is refused.',
          parameters: referenceParams,
          responses: {
            ...pageResponses('ReferenceResponse'),
            ...keyedErrors({
              unknownDataset: new UnknownDatasetError('countries'),
              unknownParameter: new InvalidParametersError({ country: ['Unknown parameter: /v1/reference accepts dataset, limit, cursor and release'] }),
              invalidCursor: new InvalidCursorError(),
            }),
            ...unknownRelease(),
          },
        },
      },
      '/v1/aggregate': {
        get: {
          operationId: 'getAggregate',
          tags: ['data'],
          summary: 'Totals, averages, minima and maxima of a financial dataset, grouped',
          description: `Groups the rows of one financial dataset that pass the filters by up to ${MAX_GROUP_BY} dimensions and computes each measure per group: sums are exact (the double nearest the true sum), averages divide that sum by \`rows\`. Takes every filter of /v1/financials. What each metric may be combined with:\n\n${metricsTable()}\n\nWithout a filter or a grouping on \`state\`, only national rows (\`state\` "") are read, since a country's national row already totals its states' rows.`,
          parameters: [...aggregateParams, ...dimensionParameters(new Set(aggregateParams.map((p) => p.name)))],
          responses: {
            ...pageResponses('AggregateResponse', {
              csv: 'RFC 4180 CSV with a header row: the group_by dimensions, the measure keys, then `rows`; a rolled-up dimension is an empty field (an empty string value is `""`).',
              arrow: 'Arrow IPC stream: text dimensions Utf8, `year` Int32, measures Float64, `rows` Int32; a rolled-up dimension is null.',
            }),
            ...keyedErrors({
              missingMetric: new InvalidParametersError({ metric: ['Invalid type: Expected string but received undefined'] }),
              unknownMetric: new UnknownMetricError('revenue'),
              invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fxDef.dimensions),
              invalidGroupBy: new InvalidGroupByError('product', 'fx', fxDef.dimensions),
              invalidMeasure: new InvalidMeasureError('ggr:median', 'ggr', ['ggr']),
              invalidOrder: new InvalidOrderError('-revenue', ['region', 'ggr_sum', 'rows']),
              mixedCurrencies: new MixedUnitsError('Cannot combine ggr values in different currencies: filter fx to one currency or add fx to group_by'),
              rateSum: new RateSumError('Cannot sum inflation, a rate: use avg, min or max'),
              mixedTotals: new MixedTotalsError('Cannot add national totals (state "") to the rows they total: filter state to "" alone or leave "" out, or add state to group_by'),
              tooManyGroups: new TooManyGroupsError(250_000, 100_000),
              invalidCursor: new InvalidCursorError(),
            }),
            ...unknownRelease(),
          },
        },
      },
      '/v1/revisions': {
        get: {
          operationId: 'getRevisions',
          tags: ['data'],
          summary: 'Rows of a financial dataset that differ between two published releases',
          description: 'Rows matched by their dimension values: `added` (only in `to`), `removed` (only in `from`) or `changed` (any metric differs), with their values in each release. Takes every filter of /v1/financials. Pages follow the dimension values in order; one walk computes the diff once.',
          parameters: [...revisionParams, ...dimensionParameters(new Set(revisionParams.map((p) => p.name)))],
          responses: {
            ...pageResponses('RevisionsResponse', {
              csv: 'RFC 4180 CSV with a header row: the dimensions, `change`, then `before_<metric>` and `after_<metric>` per metric; empty where the row is absent.',
              arrow: 'Arrow IPC stream: text dimensions and `change` Utf8, `year` Int32, values Float64; null where the row is absent.',
            }),
            ...keyedErrors({
              missingMetric: new InvalidParametersError({ metric: ['Invalid type: Expected string but received undefined'] }),
              unknownMetric: new UnknownMetricError('revenue'),
              noEarlierRelease: new InvalidParametersError({ from: ['No release was published before 2026-07: name the release to compare with, as from=YYYY-MM'] }),
              invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fxDef.dimensions),
              invalidCursor: new InvalidCursorError(),
            }),
            ...unknownRelease(),
          },
        },
      },
      '/v1/export': {
        get: {
          operationId: 'getExport',
          tags: ['data'],
          summary: 'Every matching row of a financial dataset in one file',
          description: `The rows /v1/financials would page for the same filters and release, in the same order, as flat columns (the dimensions, then the metrics; \`year\` INTEGER, metrics DOUBLE), in one response. \`Accept\` picks the file: ${EXPORT_FORMATS.map((f) => `\`${f.mediaType}\``).join(', ')}; none or \`*/*\` is Parquet. Counts one request and one export of the key's daily export budget. Unfiltered Parquet is the release's own published file: ETag, 304, and \`Range\` for resumable downloads.`,
          parameters: [...exportParams, ...dimensionParameters(new Set(exportParams.map((p) => p.name)))],
          responses: {
            200: {
              description: 'The whole export.',
              headers: headerRefs([...LIMIT_HEADERS, 'X-Export-Limit', 'X-Export-Remaining', 'X-Export-Reset', 'Content-Disposition', 'Cache-Control']),
              content: Object.fromEntries(EXPORT_FORMATS.map((f) => [f.mediaType, { schema: { type: 'string', contentMediaType: f.mediaType } }])),
            },
            206: {
              description: 'The byte range asked for of the release\'s own Parquet file (unfiltered Parquet only).',
              headers: headerRefs([...LIMIT_HEADERS, 'Content-Range', 'Accept-Ranges', 'ETag', 'Content-Disposition']),
              content: { 'application/vnd.apache.parquet': { schema: { type: 'string', contentMediaType: 'application/vnd.apache.parquet' } } },
            },
            304: { description: 'If-None-Match holds the whole file\'s ETag.', headers: headerRefs([...LIMIT_HEADERS, 'ETag']) },
            406: errorResponse('`Accept` names no export format.', { notAcceptable: new NotAcceptableError(EXPORT_FORMATS.map((f) => f.mediaType)) }, headerRefs(LIMIT_HEADERS)),
            416: errorResponse('`Range` starts past the end of the file.', { rangeNotSatisfiable: new RangeNotSatisfiableError(1234) }, headerRefs(LIMIT_HEADERS)),
            ...keyedErrors({
              missingMetric: new InvalidParametersError({ metric: ['Invalid type: Expected string but received undefined'] }),
              unknownMetric: new UnknownMetricError('revenue'),
              invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', fxDef.dimensions),
            }),
            429: errorResponse('A rate limit (spec 8) or the key\'s daily export budget is spent; retry after `Retry-After` seconds.', {
              limited: new TooManyRequestsError(42),
              exportLimited: new ExportLimitError(50, 3600),
            }, headerRefs([...LIMIT_HEADERS, 'Retry-After'])),
            ...unknownRelease(),
          },
        },
      },
      '/v1/releases': {
        get: {
          operationId: 'getReleases',
          tags: ['data'],
          summary: 'The published releases, newest first',
          description: 'Each release a request may name with `release=`: when it was published, whether it is current, each dataset\'s row count and years, and, against the release that was current when it was published (`changes_against`), the rows added, removed and changed per dataset (computed once by `etl load`).',
          responses: {
            200: {
              description: 'The releases (JSON only).',
              headers: headerRefs([...LIMIT_HEADERS, 'ETag', 'Cache-Control']),
              content: { 'application/json': { schema: ref('ReleasesResponse') } },
            },
            304: { description: 'If-None-Match holds the ETag.', headers: headerRefs(LIMIT_HEADERS) },
            ...keyedErrors({ unknownParameter: new InvalidParametersError({ limit: ['Unknown parameter: /v1/releases takes none'] }) }),
          },
        },
      },
      '/v1/catalog': {
        get: {
          operationId: 'getCatalog',
          tags: ['data'],
          summary: 'List every dataset',
          description: 'Every dataset with its name, description, dimensions and metrics (spec 2.1), and, once a release is loaded, the release served (or the one `release` names) and each dataset\'s row count and first and last year. Other parameters are ignored.',
          parameters: catalogParams,
          responses: {
            200: {
              description: 'The catalog (JSON only; Accept is not negotiated here).',
              headers: headerRefs([...LIMIT_HEADERS, 'ETag']),
              content: { 'application/json': { schema: ref('CatalogResponse') } },
            },
            304: { description: 'If-None-Match holds the ETag.', headers: headerRefs(LIMIT_HEADERS) },
            ...keyedErrors({ badRelease: new InvalidParametersError({ release: ['Expected a release id like 2026-11'] }) }),
            ...unknownRelease(),
          },
        },
      },
      '/healthz': {
        get: {
          operationId: 'getHealth',
          tags: ['operations'],
          summary: 'Whether data is served (no key)',
          description: 'For orchestrators and balancers: 200 with the release served once data is loaded, 503 while the first release loads.',
          security: [],
          responses: {
            200: {
              description: 'Serving a release; `retained` are the other releases loaded (the one a switch replaced, those asked for by `release=` or a cursor), most recently used first.',
              content: { 'application/json': { schema: { type: 'object', required: ['status', 'release', 'retained'], properties: { status: { const: 'ok' }, release: { type: 'string' }, retained: { type: 'array', items: { type: 'string' } } } } } },
            },
            503: { description: 'The first release is still loading.', content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { const: 'loading' } } } } } },
            ...edgeErrors(),
          },
        },
      },
      '/openapi.json': {
        get: { operationId: 'getOpenApi', tags: ['documentation'], summary: 'This document (no key)', description: 'The OpenAPI 3.1 description of this API, built from the code that serves it.', security: [], responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } }, ...edgeErrors() } },
      },
      '/docs/changelog': {
        get: { operationId: 'getChangelog', tags: ['documentation'], summary: 'CHANGELOG.md: dated changes, newest first (no key)', description: 'Dated entries, newest first; changes that can break a client start with `Breaking:` (spec 9.4).', security: [], responses: { 200: { description: 'Markdown', content: { 'text/markdown': { schema: { type: 'string' } } } }, ...edgeErrors() } },
      },
      '/docs': {
        get: { operationId: 'getDocs', tags: ['documentation'], summary: 'This document as a browsable page (no key)', description: 'Swagger UI rendering /openapi.json, served from this origin only.', security: [], responses: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } }, ...edgeErrors() } },
      },
    },
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'A key `sk_live_…` from the invite and claim flow (spec 5).' } },
      headers: HEADERS,
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          additionalProperties: false,
          properties: {
            error: { type: 'string' },
            details: {
              type: 'object',
              required: ['formErrors', 'fieldErrors'],
              additionalProperties: false,
              properties: {
                formErrors: { type: 'array', items: { type: 'string' } },
                fieldErrors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
              },
            },
            retryAfterSeconds: { type: 'integer', minimum: 1, description: '429 only: equals Retry-After.' },
          },
        },
        ...Object.fromEntries(DATASETS.map((d) => [rowName(d), rowSchema(d)])),
        Pagination: pagination,
        FinancialResponse: envelope(financialSets, {
          dataset: { enum: financialSets.map((d) => d.name) },
          metric: { enum: financialSets.map((d) => d.name) },
          filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          row_count: { type: 'integer', minimum: 0 },
          release: releaseId,
        }),
        AggregateRow: {
          type: 'object',
          additionalProperties: false,
          required: ['dimensions', 'values'],
          properties: {
            dimensions: {
              type: 'object',
              description: 'The group: each group_by dimension\'s value; null where a rollup row totals that dimension.',
              additionalProperties: { type: ['string', 'integer', 'null'] },
            },
            values: {
              type: 'object',
              description: 'Each measure as `<metric>_<fn>` (null only for a sum beyond the largest double), and `rows`: the rows added up.',
              required: ['rows'],
              properties: { rows: { type: 'integer', minimum: 0 } },
              additionalProperties: { type: ['number', 'null'] },
            },
          },
        },
        AggregateResponse: {
          type: 'object',
          additionalProperties: false,
          required: ['meta', 'data', 'pagination'],
          properties: {
            meta: {
              type: 'object',
              additionalProperties: false,
              required: ['dataset', 'metric', 'group_by', 'measures', 'filters_applied', 'row_count', 'release'],
              properties: {
                dataset: { enum: financialSets.map((d) => d.name) },
                metric: { enum: financialSets.map((d) => d.name) },
                group_by: { type: 'array', items: { type: 'string' } },
                measures: { type: 'array', items: { type: 'string' }, description: 'The measure keys, in column order.' },
                filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'The filters used, including `state: [""]` when only national rows were read.' },
                omitted: {
                  type: 'array',
                  description: 'Without `measure`: default measures left out because they cannot be combined here, and why.',
                  items: { type: 'object', additionalProperties: false, required: ['measure', 'reason'], properties: { measure: { type: 'string' }, reason: { type: 'string' } } },
                },
                row_count: { type: 'integer', minimum: 0, description: 'Groups in this page.' },
                release: releaseId,
              },
            },
            data: { type: 'array', items: ref('AggregateRow') },
            pagination: ref('Pagination'),
          },
        },
        RevisionRow: {
          type: 'object',
          additionalProperties: false,
          required: ['dimensions', 'change', 'before', 'after'],
          properties: {
            dimensions: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
            change: { enum: [...CHANGES] },
            before: { type: ['object', 'null'], description: 'The metrics in `from`; null for an added row.', additionalProperties: { type: 'number' } },
            after: { type: ['object', 'null'], description: 'The metrics in `to`; null for a removed row.', additionalProperties: { type: 'number' } },
          },
        },
        RevisionsResponse: {
          type: 'object',
          additionalProperties: false,
          required: ['meta', 'data', 'pagination'],
          properties: {
            meta: {
              type: 'object',
              additionalProperties: false,
              required: ['dataset', 'metric', 'from', 'to', 'filters_applied', 'row_count'],
              properties: {
                dataset: { enum: financialSets.map((d) => d.name) },
                metric: { enum: financialSets.map((d) => d.name) },
                from: releaseId,
                to: releaseId,
                change: { type: 'array', items: { enum: [...CHANGES] }, description: 'The kinds of change asked for, when `change` was given.' },
                filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
                row_count: { type: 'integer', minimum: 0, description: 'Rows in this page.' },
              },
            },
            data: { type: 'array', items: ref('RevisionRow') },
            pagination: ref('Pagination'),
          },
        },
        ReleasesResponse: {
          type: 'object',
          additionalProperties: false,
          required: ['releases'],
          properties: {
            releases: {
              type: 'array',
              items: {
                type: 'object',
                additionalProperties: false,
                required: ['id', 'published_at', 'current', 'synthetic', 'datasets'],
                properties: {
                  id: releaseId,
                  published_at: { type: 'string', format: 'date-time' },
                  current: { type: 'boolean' },
                  synthetic: { type: 'boolean' },
                  datasets: {
                    type: 'object',
                    additionalProperties: {
                      type: 'object',
                      additionalProperties: false,
                      required: ['row_count'],
                      properties: { row_count: { type: 'integer', minimum: 0 }, first_year: { type: 'integer' }, last_year: { type: 'integer' } },
                    },
                  },
                  changes: {
                    type: 'object',
                    description: 'Rows added, removed and changed per dataset against `changes_against`; absent for the first release and for generated ones.',
                    additionalProperties: {
                      type: 'object',
                      additionalProperties: false,
                      required: ['added', 'removed', 'changed'],
                      properties: { added: { type: 'integer', minimum: 0 }, removed: { type: 'integer', minimum: 0 }, changed: { type: 'integer', minimum: 0 } },
                    },
                  },
                  changes_against: releaseId,
                },
              },
            },
          },
        },
        ReferenceResponse: envelope(referenceSets, { dataset: { enum: referenceSets.map((d) => d.name) }, row_count: { type: 'integer', minimum: 0 }, release: releaseId }),
        CatalogResponse: {
          type: 'object',
          additionalProperties: false,
          required: ['datasets'],
          properties: {
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
                  row_count: { type: 'integer', minimum: 0 },
                  first_year: { type: 'integer' },
                  last_year: { type: 'integer' },
                },
              },
            },
          },
        },
      },
    },
  };
}
