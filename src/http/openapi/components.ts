import { DATASETS, type DatasetDef, INTEGER_DIMENSIONS } from '../../registry.ts';
import type { Json } from './json.ts';
import { ref } from './responses.ts';

// Schemas more than one route's responses name: the error body, pagination, and each
// dataset's row, derived from the registry.

/** The id of a monthly release, as the serving release's manifest names it. */
export const releaseId: Json = { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' };

/** The rows one dataset added, removed and changed between two releases (the manifest's counts, or a release event's). */
export const changeCounts: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['added', 'removed', 'changed'],
  properties: {
    added: { type: 'integer', minimum: 0 },
    removed: { type: 'integer', minimum: 0 },
    changed: { type: 'integer', minimum: 0 },
  },
};

/** `as_of` of an answer read at `as_of=`. */
export const asOfMeta: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['asked', 'release'],
  description:
    'Present when `as_of` was sent: the instant read (a date as the end of its UTC day), and the release served then, which this answer is.',
  properties: { asked: { type: 'string', format: 'date-time' }, release: releaseId },
};

export const rowName = (def: DatasetDef) => `${def.name}Row`;

/** `meta.warnings` of an answer without rows. */
export const warnings: Json = {
  type: 'array',
  items: { type: 'string' },
  description:
    'Only on an answer without rows, and only when a filter names a value the release does not hold: one line per such value, with the values meant when they are near, e.g. `country "france" matches no value; did you mean "France"?`.',
};

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
      values: {
        type: 'object',
        additionalProperties: false,
        required: [...def.metrics],
        properties: Object.fromEntries(def.metrics.map((m) => [m, { type: 'number' }])),
      },
    },
  };
}

/** A row of any of `sets`, for an envelope's `data`. */
export const rowOf = (sets: readonly DatasetDef[]): Json => ({ anyOf: sets.map((d) => ref(rowName(d))) });

/** A page's JSON envelope (spec 2.6): `meta` with exactly these fields (and those of `optional` when they apply), `data` of `row`, pagination. */
export function envelope(row: Json, meta: Record<string, Json>, optional: Record<string, Json> = {}): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['meta', 'data', 'pagination'],
    properties: {
      meta: { type: 'object', additionalProperties: false, required: Object.keys(meta), properties: { ...meta, ...optional } },
      data: { type: 'array', items: row },
      pagination: ref('Pagination'),
    },
  };
}

export const SHARED_SCHEMAS: Readonly<Record<string, Json>> = {
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
      hint: {
        type: 'string',
        description:
          'Where the spec fixes `error` word for word and gives no `details`: how to get what was asked, e.g. that `group_by` is a parameter of /v1/aggregate.',
      },
    },
  },
  ...Object.fromEntries(DATASETS.map((d) => [rowName(d), rowSchema(d)])),
  Pagination: {
    type: 'object',
    additionalProperties: false,
    required: ['cursor', 'has_more'],
    properties: { cursor: { type: 'string', description: '`""` on the last page.' }, has_more: { type: 'boolean' } },
  },
};
