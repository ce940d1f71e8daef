import {
  type ApiError,
  BusyError,
  DuplicateKeyHeaderError,
  ExportLimitError,
  ExportsOpenError,
  HeavyBudgetError,
  InternalError,
  InvalidKeyError,
  InvalidParametersError,
  KeysUnavailableError,
  MissingKeyError,
  NotReadyError,
  QueryTimeoutError,
  QueryTooLongError,
  ReleaseLoadingError,
  ReleaseLoadRunningError,
  ReleaseUnavailableError,
  TooManyRequestsError,
  UnknownReleaseError,
} from '../../errors/index.ts';
import { FORMATS, PAGE_FORMATS } from '../../render/formats.ts';
import { QUERY_LIMITS } from '../middleware/query-guard.ts';
import { notAcceptable } from '../respond/negotiate.ts';
import type { Json } from './json.ts';

// The responses several routes share, each error response with one example per error
// of the catalog that gives it, made by the class that sends it.

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The response headers routes refer to (components.headers), saying whether each is required where it appears. */
export const HEADERS: Readonly<Record<string, Json>> = {
  'X-RateLimit-Limit': {
    required: true,
    description: 'Limit of the window with the least remaining (spec 8).',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    required: true,
    description: 'Requests left in that window after this one.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    required: true,
    description: 'Whole seconds until that window gives a request back (delta seconds).',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Policy': {
    required: true,
    description: 'Every window (draft-ietf-httpapi-ratelimit-headers-10), e.g. `"minute";q=100;w=60, "day";q=10000;w=86400`.',
    schema: { type: 'string' },
  },
  RateLimit: {
    required: true,
    description: 'Every window\'s remaining and reset, e.g. `"minute";r=99;t=60, "day";r=9999;t=40000`.',
    schema: { type: 'string' },
  },
  'Retry-After': { required: true, description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } },
  'X-Heavy-Remaining': {
    required: false,
    description:
      'Whole seconds of heavy work the key has left in the rolling minute (KEY_HEAVY_SECONDS_PER_MINUTE), on answers that ran heavy work and on 429 `heavy_budget`.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Preference-Applied': {
    required: false,
    description:
      'RFC 7240: `wait=N` when a `Prefer: wait=N` shorter than QUERY_TIMEOUT_MS set the deadline of the heavy work this request ran.',
    schema: { type: 'string' },
  },
  ETag: {
    required: true,
    description: 'Strong tag of this representation (release, request, format and coding).',
    schema: { type: 'string' },
  },
  'Cache-Control': {
    required: true,
    description:
      '`private, max-age=…` on a 200 or 304 (`private, max-age=31536000, immutable` for a release other than the current one); `no-store` on an error.',
    schema: { type: 'string' },
  },
  Vary: { required: true, description: 'Request headers that select the representation.', schema: { type: 'string' } },
  Link: {
    description: 'While more pages follow: `<…&cursor=…>; rel="next"`, this request with the next cursor (root-relative).',
    schema: { type: 'string', pattern: '^<[^>]+>; rel="next"$' },
  },
  'X-Export-Limit': {
    required: true,
    description: 'Bulk exports this key may take per UTC day (EXPORT_LIMIT_PER_DAY).',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Export-Remaining': { required: true, description: 'Exports left today after this one.', schema: { type: 'integer', minimum: 0 } },
  'X-Export-Reset': {
    required: true,
    description: 'Whole seconds until an export comes back (the UTC day ends).',
    schema: { type: 'integer', minimum: 0 },
  },
  'Content-Disposition': {
    required: true,
    description: 'The file\'s name: `attachment; filename="ggr-2026-11.parquet"`.',
    schema: { type: 'string' },
  },
  'Accept-Ranges': {
    required: true,
    description: '`bytes`: the whole-file answer takes one `Range` to resume a download.',
    schema: { type: 'string' },
  },
  'Content-Range': { required: true, description: 'The bytes sent, `bytes a-b/size`.', schema: { type: 'string' } },
  'X-Next-Cursor': { description: "CSV and Arrow only, while more pages follow: the next page's cursor.", schema: { type: 'string' } },
  'X-Warnings': {
    description:
      'CSV and Arrow only, when a filter names a value the release does not hold: a JSON array of the lines JSON answers give in `meta.warnings` (non-ASCII characters as `\\uXXXX` escapes).',
    schema: { type: 'string' },
  },
};

export const LIMIT_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit'];

/** References to the header components. */
export const headerRefs = (names: readonly string[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** An error response with one example per catalog error that gives it. */
export function errorResponse(description: string, errors: Record<string, ApiError>, headers: Json = {}): Json {
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

const tooManyParameters = () => new InvalidParametersError({}, [`Too many query parameters: at most ${QUERY_LIMITS.maxParams}`]);

/** The responses every keyed /v1 operation can give besides its own; `extra400` are its own 400s. */
export function keyedErrors(extra400: Record<string, ApiError>): Json {
  const limits = headerRefs(LIMIT_HEADERS);
  return {
    400: errorResponse('Invalid request (spec 7.2).', { ...extra400, tooManyParameters: tooManyParameters() }, limits),
    401: errorResponse(
      'Missing, invalid or duplicated key (spec 5.3).',
      {
        missing: new MissingKeyError(),
        invalid: new InvalidKeyError(),
        duplicated: new DuplicateKeyHeaderError(),
      },
      limits,
    ),
    414: errorResponse('Query string too long.', { tooLong: new QueryTooLongError(QUERY_LIMITS.maxBytes) }, limits),
    429: errorResponse(
      "A rate limit is exceeded (spec 8), the key's heavy-seconds budget (KEY_HEAVY_SECONDS_PER_MINUTE) is spent for a request that would run heavy work, or the request names a release that is not loaded while another release loads for the same key; retry after `Retry-After` seconds.",
      {
        limited: new TooManyRequestsError(42),
        heavyBudget: new HeavyBudgetError(60, 12),
        releaseLoadRunning: new ReleaseLoadRunningError('2026-09'),
      },
      {
        ...limits,
        ...headerRefs(['Retry-After', 'X-Heavy-Remaining']),
      },
    ),
    500: errorResponse('Unexpected failure.', { internal: new InternalError() }),
    503: errorResponse(
      'Data is still loading, the key cannot be verified right now, a release asked for is still loading or cannot be served, or heavy work (an aggregate computed, a revisions diff, a filtered export, a release loaded) waited past ADMISSION_WAIT_MS for its turn; retry after `Retry-After` seconds.',
      {
        busy: new BusyError(10),
        loading: new NotReadyError(),
        keys: new KeysUnavailableError(),
        releaseLoading: new ReleaseLoadingError('2026-09'),
        releaseUnavailable: new ReleaseUnavailableError('2026-09'),
      },
      headerRefs(['Retry-After']),
    ),
  };
}

/**
 * The 429 of an operation whose CSV and Arrow without `limit` stream its whole answer,
 * charged as an export (/v1/revisions, /v1/history): the limits of a page, and an export's.
 */
export const wholeAnswerLimits = () =>
  errorResponse(
    "A rate limit (spec 8) or the key's heavy-seconds budget is spent; for CSV or Arrow without `limit`, also the key's daily export budget, or the key has EXPORTS_OPEN_PER_KEY exports open. Retry after `Retry-After` seconds.",
    {
      limited: new TooManyRequestsError(42),
      heavyBudget: new HeavyBudgetError(60, 12),
      exportLimited: new ExportLimitError(50, 3600),
      exportsOpen: new ExportsOpenError(2, 10),
    },
    headerRefs([...LIMIT_HEADERS, 'Retry-After', 'X-Heavy-Remaining']),
  );

/**
 * For operations that take `release=`: 404 for a release not published, and 504 for
 * heavy work past its deadline (a release loaded for the request, or the operation's
 * own: an aggregate computed, a diff, a filtered export).
 */
export const releaseResponses = () => ({
  404: errorResponse(
    '`release` names no published release.',
    { unknownRelease: new UnknownReleaseError('1999-01') },
    headerRefs(LIMIT_HEADERS),
  ),
  504: errorResponse(
    'Heavy work ran past its deadline, counted from its turn: QUERY_TIMEOUT_MS, or less with `Prefer: wait=N`; it was stopped. Narrow the request rather than retry it unchanged.',
    { timeout: new QueryTimeoutError(15_000, false), preferred: new QueryTimeoutError(2_000, true) },
    headerRefs([...LIMIT_HEADERS, 'Preference-Applied']),
  ),
});

/** What the request edge answers on any path, keyed or not (src/http/middleware/query-guard.ts). */
export function edgeErrors(): Json {
  return {
    400: errorResponse('Too many query parameters.', { tooManyParameters: tooManyParameters() }),
    414: errorResponse('Query string too long.', { tooLong: new QueryTooLongError(QUERY_LIMITS.maxBytes) }),
    500: errorResponse('Unexpected failure.', { internal: new InternalError() }),
  };
}

const ROW_BODIES = {
  csv: 'RFC 4180 CSV with a header row: dimension columns, then metric columns.',
  arrow: 'Arrow IPC stream: text dimensions dictionary-encoded, `year` Int32, metrics Float64.',
};

/** What a paged route answers to CSV and Arrow without `limit`: the whole result, and whether it streams as an export does. */
export interface WholeAnswer {
  readonly description: string;
  readonly streamed?: boolean;
}

/** A header of HEADERS that this answer carries only sometimes, saying when. */
const sometimes = (name: string, when: string): Json => ({
  ...HEADERS[name],
  required: false,
  description: `${HEADERS[name]!.description} ${when}`,
});

/** The export's headers on a streamed whole answer, which is charged as one export. */
const streamedHeaders = (): Json => ({
  ETag: sometimes('ETag', 'Absent on a whole CSV or Arrow answer (no `limit`), which streams.'),
  ...Object.fromEntries(
    ['X-Export-Limit', 'X-Export-Remaining', 'X-Export-Reset', 'Content-Disposition'].map((name) => [
      name,
      sometimes(name, 'On a whole CSV or Arrow answer (no `limit`) only: it is charged as one export.'),
    ]),
  ),
});

/**
 * A paged route's 200 (in every page format, JSON's body the `envelope` schema), 304
 * and 406; `whole` says what CSV and Arrow without `limit` answer.
 */
export function pageResponses(envelope: string, text: { csv: string; arrow: string } = ROW_BODIES, whole?: WholeAnswer): Json {
  const limits = headerRefs(LIMIT_HEADERS);
  const caching = headerRefs(['ETag', 'Cache-Control', 'Vary']);
  const bodies: Record<(typeof PAGE_FORMATS)[number], Json> = {
    json: { schema: ref(envelope) },
    csv: { schema: { type: 'string', description: text.csv } },
    arrow: { schema: { type: 'string', contentMediaType: 'application/vnd.apache.arrow.stream', description: text.arrow } },
  };
  return {
    200: {
      description: `One page, in the format \`format\` names, else the one \`Accept\` chose (JSON when there is neither).${whole ? ` ${whole.description}` : ''}`,
      headers: {
        ...limits,
        ...caching,
        ...(whole?.streamed && streamedHeaders()),
        Link: { $ref: '#/components/headers/Link' },
        'X-Next-Cursor': { $ref: '#/components/headers/X-Next-Cursor' },
        'X-Warnings': { $ref: '#/components/headers/X-Warnings' },
      },
      content: Object.fromEntries(PAGE_FORMATS.map((f) => [FORMATS[f].mediaType, bodies[f]])),
    },
    304: { description: "If-None-Match holds this representation's ETag.", headers: { ...limits, ETag: caching.ETag } },
    406: errorResponse(
      '`Accept` names no format served, and no `format` chose one.',
      { notAcceptable: notAcceptable(PAGE_FORMATS) },
      limits,
    ),
  };
}
