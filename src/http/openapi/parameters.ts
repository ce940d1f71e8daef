import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { DATASETS } from '../../registry.ts';
import type { Json } from './json.ts';

// A route's query parameters in the OpenAPI document, from its own valibot schema:
// names, patterns, defaults and which are required come from what the code validates.

export const financialSets = DATASETS.filter((d) => d.kind === 'financial');
export const referenceSets = DATASETS.filter((d) => d.kind === 'reference');

/** Descriptions of the parameters several routes share. */
export const SHARED_DESCRIPTIONS: Readonly<Record<string, string>> = {
  metric: `Financial dataset: ${financialSets.map((d) => d.name).join(', ')} (GET /v1/catalog lists them). Given once.`,
  dataset: `Reference dataset: ${referenceSets.map((d) => d.name).join(', ')}. Given once.`,
  period: 'Keeps rows whose calendar year overlaps `YYYY-MM-DD:YYYY-MM-DD` (rows are annual). Given once.',
  limit: 'Rows per page. Given once.',
  cursor: 'Opaque cursor of the next page: `pagination.cursor` of the previous JSON page, or its `X-Next-Cursor` header. Keep the other parameters the same.',
  release: 'A published release `YYYY-MM` to read instead of the current one (GET /v1/releases lists them). Its answers never change: they are cached as immutable. Given once.',
  year: 'Filter by integer year; repeat for several values. Applies to every metric.',
  format: 'The body\'s format, by name: it wins over `Accept`, so a URL alone (pandas, R, Excel, a browser) picks it. A cursor pages only the format it was issued in. Given once.',
};

type Schema = v.GenericSchema & { entries: Record<string, v.GenericSchema> };

/**
 * A route schema's parameters, each with its description (`descriptions` over the
 * shared ones): a parameter that may repeat is a form-exploded array
 * (`country=A&country=B`); `limit` an integer with the bounds the schema checks.
 */
export function queryParameters(schema: Schema, descriptions: Readonly<Record<string, string>> = {}): Json[] {
  const converted = toJsonSchema(schema, { errorMode: 'ignore' }) as { properties: Record<string, Json> };
  const missing = v.safeParse(schema, {});
  const required = new Set(missing.success ? [] : missing.issues.map((issue) => String(issue.path?.[0]?.key)));
  const described = { ...SHARED_DESCRIPTIONS, ...descriptions };
  return Object.entries(converted.properties).map(([name, property]) => {
    const repeats = Array.isArray(property.anyOf);
    const { anyOf: _anyOf, type: _type, items, default: fallback, ...rest } = property;
    const itemSchema = repeats ? (items as Json) : { type: 'string', ...rest };
    const parameter = {
      name,
      in: 'query',
      required: required.has(name),
      ...(repeats ? { style: 'form', explode: true } : {}),
      schema: repeats ? { type: 'array', items: itemSchema } : fallback === undefined ? itemSchema : { ...itemSchema, default: fallback },
    };
    if (name === 'limit') {
      const limit = schema.entries.limit;
      const bounds = { minimum: actionRequirement(limit, 'min_value'), maximum: actionRequirement(limit, 'max_value') };
      return { ...parameter, description: described.limit, schema: { type: 'integer', ...bounds, default: Number(fallback) } };
    }
    return { ...parameter, description: described[name] };
  });
}

/** The first value of a valibot action of `type` anywhere in `schema`'s pipes (limit's bounds). */
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

/** One parameter per dimension of any financial dataset that `taken` does not already name, saying which metrics take it. */
export function dimensionParameters(taken: readonly Json[]): Json[] {
  const known = new Set(taken.map((p) => p.name));
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

/** A financial route's parameters: its schema's, then one per dimension. */
export const financialParameters = (schema: Schema, descriptions: Readonly<Record<string, string>> = {}): Json[] => {
  const own = queryParameters(schema, descriptions);
  return [...own, ...dimensionParameters(own)];
};
