import {
  DuplicateKeyHeaderError,
  InternalError,
  InvalidKeyError,
  InvalidParametersError,
  KeysUnavailableError,
  MissingKeyError,
  QueryTooLongError,
  UsageLimitError,
  UsageUnavailableError,
} from '../../../errors/index.ts';
import { QUERY_LIMITS } from '../../middleware/query-guard.ts';
import { exampleRequest } from '../examples.ts';
import type { Json } from '../json.ts';
import { errorResponse, headerRefs, LIMIT_HEADERS, ref } from '../responses.ts';

// GET /v1/usage and /v1/usage/daily in the document.

const noStore = {
  'Cache-Control': { required: true, description: '`no-store`: each answer is of its moment.', schema: { type: 'string' } },
};

/** What both usage operations can answer besides their 200. */
function usageErrors(extra400: Json, extra503: Json = {}): Json {
  const limits = headerRefs(LIMIT_HEADERS);
  return {
    400: errorResponse('Invalid request (spec 7.2).', extra400 as never, limits),
    401: errorResponse(
      'Missing, invalid, revoked or duplicated key (spec 5.3).',
      { missing: new MissingKeyError(), invalid: new InvalidKeyError(), duplicated: new DuplicateKeyHeaderError() },
      limits,
    ),
    414: errorResponse('Query string too long.', { tooLong: new QueryTooLongError(QUERY_LIMITS.maxBytes) }, limits),
    429: errorResponse(
      "The key's usage guard (USAGE_LIMIT_PER_MINUTE) is spent; its limit headers are the guard's (`usage-minute`). The key's other limits never refuse this.",
      { usageLimited: new UsageLimitError(30, 12) },
      headerRefs([...LIMIT_HEADERS, 'Retry-After']),
    ),
    500: errorResponse('Unexpected failure.', { internal: new InternalError() }),
    503: errorResponse(
      'The key cannot be verified right now.',
      { keys: new KeysUnavailableError(), ...extra503 } as never,
      headerRefs(['Retry-After']),
    ),
  };
}

export const usageOperation: Json = {
  operationId: 'getUsage',
  tags: ['usage'],
  summary: 'Where the calling key stands: every limit that can refuse it, now',
  description:
    "Each limit that can refuse the key's requests, read from the limiters' own state (Redis with REDIS_URL, so replicas agree), which one the `X-RateLimit-*` headers describe (`binding`), and the key's last refusal. Counts against no limit but USAGE_LIMIT_PER_MINUTE, and answers while the key's other requests get 429. With Redis down it answers what this process knows, `limiter: \"unavailable\"`. Takes no parameters.",
  'x-codeSamples': exampleRequest('/v1/usage'),
  responses: {
    200: {
      description: 'The key and its limits now.',
      headers: { ...headerRefs(LIMIT_HEADERS), ...noStore },
      content: { 'application/json': { schema: ref('UsageResponse') } },
    },
    ...usageErrors({ unknown: new InvalidParametersError({ start: ['Unknown parameter: /v1/usage takes none'] }) }),
  },
};

const nullable = (type: string, description: string) => ({ type: [type, 'null'], description });
const limitNow: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['limit', 'used', 'remaining', 'reset', 'reset_at', 'window'],
  properties: {
    limit: { type: 'number', minimum: 0, description: 'The setting that sets it (docs/api.md "Usage").' },
    used: nullable('number', 'Spent in the window, or running now; null while Redis does not answer.'),
    remaining: nullable('number', 'Left; null while Redis does not answer.'),
    reset: nullable(
      'integer',
      'Whole seconds until a unit comes back (delta seconds, like `X-RateLimit-Reset`); null for a limit on work at once.',
    ),
    reset_at: { type: ['string', 'null'], format: 'date-time', description: 'The instant `reset` names.' },
    window: nullable('integer', "The window's length in seconds; null for a limit on work at once."),
  },
};
const LIMIT_NAMES = ['minute', 'day', 'exports_day', 'exports_open', 'heavy_seconds_minute', 'heavy_running'];

export const USAGE_SCHEMAS: Readonly<Record<string, Json>> = {
  UsageLimit: limitNow,
  UsageResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'as_of', 'limiter', 'binding', 'limits', 'last_refused'],
    properties: {
      key: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'client', 'created_at', 'last_used_at'],
        properties: {
          id: { type: 'string' },
          client: { type: 'string' },
          created_at: { type: 'string', format: 'date-time' },
          last_used_at: { type: ['string', 'null'], format: 'date-time', description: 'The last data request, to within a minute.' },
        },
      },
      as_of: { type: 'string', format: 'date-time' },
      limiter: {
        enum: ['redis', 'memory', 'unavailable', 'disabled'],
        description: 'Where the limits count: Redis shared by the replicas, this process, or `unavailable` while Redis does not answer.',
      },
      binding: { enum: ['minute', 'day'], description: 'The window the `X-RateLimit-*` headers describe now.' },
      limits: {
        type: 'object',
        additionalProperties: false,
        required: LIMIT_NAMES,
        properties: Object.fromEntries(LIMIT_NAMES.map((name) => [name, ref('UsageLimit')])),
      },
      last_refused: {
        anyOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['at', 'limit', 'path', 'request_id', 'retry_after'],
            properties: {
              at: { type: 'string', format: 'date-time' },
              limit: {
                type: 'string',
                description: 'The limit that refused: a `limits` name, `busy`, `timeout`, `aggregate_groups` or `release_load`.',
              },
              path: { type: 'string' },
              request_id: { type: 'string' },
              retry_after: { type: ['integer', 'null'] },
            },
          },
          { type: 'null' },
        ],
      },
    },
  },
};

const tally = (description: string): Json => ({ type: 'object', description, additionalProperties: { type: 'integer', minimum: 0 } });

export const usageDailyOperation: Json = {
  operationId: 'getUsageDaily',
  tags: ['usage'],
  summary: "The calling key's usage per UTC day",
  description:
    'One entry per UTC day from `start` to `end` (both included; by default the last 7 days), at most 92: requests by status and endpoint, refusals by the limit that refused, exports, bytes sent and heavy seconds. Counted after each answer and written within USAGE_FLUSH_MS; counts against no limit but USAGE_LIMIT_PER_MINUTE.',
  'x-codeSamples': exampleRequest('/v1/usage/daily'),
  parameters: [
    {
      name: 'start',
      in: 'query',
      description: 'First UTC day, YYYY-MM-DD (default: 6 days before `end`).',
      schema: { type: 'string', format: 'date' },
      examples: { week: { value: '2026-12-01' } },
    },
    {
      name: 'end',
      in: 'query',
      description: 'Last UTC day, YYYY-MM-DD, not after today (default: today).',
      schema: { type: 'string', format: 'date' },
      examples: { week: { value: '2026-12-07' } },
    },
    {
      name: 'format',
      in: 'query',
      description: 'json (default) or csv: one row a day.',
      schema: { enum: ['json', 'csv'] },
      examples: { csv: { value: 'csv' } },
    },
  ],
  responses: {
    200: {
      description: 'The days.',
      headers: { ...headerRefs(LIMIT_HEADERS), ...noStore },
      content: {
        'application/json': { schema: ref('UsageDailyResponse') },
        'text/csv': {
          schema: {
            type: 'string',
            description: 'date, requests, exports, bytes_sent, heavy_seconds, then `status:…`, `endpoint:…`, `refused:…` columns.',
          },
        },
      },
    },
    ...usageErrors(
      {
        range: new InvalidParametersError({ start: ['2026-01-01 to 2026-12-01 is 335 days; at most 92 are kept and asked at once'] }),
      },
      { store: new UsageUnavailableError() },
    ),
  },
};

export const USAGE_DAILY_SCHEMAS: Readonly<Record<string, Json>> = {
  UsageDailyResponse: {
    type: 'object',
    additionalProperties: false,
    required: ['key', 'start', 'end', 'days'],
    properties: {
      key: { type: 'string' },
      start: { type: 'string', format: 'date' },
      end: { type: 'string', format: 'date' },
      days: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['date', 'requests', 'by_status', 'by_endpoint', 'refused', 'exports', 'bytes_sent', 'heavy_seconds'],
          properties: {
            date: { type: 'string', format: 'date' },
            requests: { type: 'integer', minimum: 0 },
            by_status: tally('Answers by HTTP status.'),
            by_endpoint: tally('Answers by route (`unmatched` for a path no route has).'),
            refused: tally(
              'Refusals by limit: minute, day, exports_day, exports_open, heavy_seconds_minute, busy (503), timeout (504), aggregate_groups, release_load.',
            ),
            exports: { type: 'integer', minimum: 0 },
            bytes_sent: {
              type: 'integer',
              minimum: 0,
              description: 'Bytes written for the answers: status line, headers and body, as sent.',
            },
            heavy_seconds: { type: 'number', minimum: 0 },
          },
        },
      },
    },
  },
};
