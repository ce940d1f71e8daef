import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { dimensionDef } from '../../registry.ts';
import { financialSets, type ParameterNotes, SHARED_NOTES } from './examples.ts';
import type { Json } from './json.ts';

// A route's query parameters in the OpenAPI document, from its own valibot schema:
// names, patterns, defaults, closed sets and which are required come from what the
// code validates; descriptions, the closed sets checked elsewhere and examples from
// the notes (examples.ts).

export { financialSets, referenceSets } from './examples.ts';

type Schema = v.GenericSchema & { entries: Record<string, v.GenericSchema> };

type Notes = Readonly<Record<string, string | ParameterNotes>>;

/**
 * A route schema's parameters, each with its notes (a description, or more), the
 * route's `notes` over `more` over the shared ones: a parameter that may repeat is a
 * form-exploded array (`country=A&country=B`); `limit` an integer with the bounds the
 * schema checks.
 */
export function queryParameters(schema: Schema, notes: Notes = {}, more: Readonly<Record<string, ParameterNotes>> = {}): Json[] {
  const converted = toJsonSchema(schema, { errorMode: 'ignore' }) as { properties: Record<string, Json> };
  const missing = v.safeParse(schema, {});
  const required = new Set(missing.success ? [] : missing.issues.map((issue) => String(issue.path?.[0]?.key)));
  return Object.entries(converted.properties).map(([name, property]) => {
    const own = notes[name];
    const note: ParameterNotes = { ...SHARED_NOTES[name], ...more[name], ...(typeof own === 'string' ? { description: own } : own) };
    const repeats = Array.isArray(property.anyOf);
    const { anyOf: _anyOf, type: _type, items, default: fallback, ...rest } = property;
    const itemSchema = {
      ...(repeats ? (items as Json) : { type: 'string', ...rest }),
      ...(note.values && { enum: note.values }),
      ...note.schema,
    };
    const parameter = {
      name,
      in: 'query',
      required: required.has(name),
      ...(repeats ? { style: 'form', explode: true } : {}),
      description: note.description,
      schema: repeats ? { type: 'array', items: itemSchema } : fallback === undefined ? itemSchema : { ...itemSchema, default: fallback },
      example: note.example,
    };
    if (name === 'limit') {
      const limit = schema.entries.limit;
      const bounds = { minimum: actionRequirement(limit, 'min_value'), maximum: actionRequirement(limit, 'max_value') };
      return { ...parameter, schema: { type: 'integer', ...bounds, default: Number(fallback) } };
    }
    return parameter;
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
    const { meaning, example, values, open } = dimensionDef(dimension);
    const named = values ? Object.entries(values).map(([value, means]) => `\`${value}\`: ${means}`) : [];
    const vocabulary = !values
      ? "Its values are the release's (no closed set: an answer without rows names the values it does not hold in `meta.warnings`)."
      : open
        ? `Among its values: ${named.join('; ')}; the others are the release's.`
        : `One of: ${named.join('; ')}.`;
    const items = values && !open ? { type: 'string', enum: Object.keys(values), 'x-enumDescriptions': values } : { type: 'string' };
    return {
      name: dimension,
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: `${meaning}. Filter by ${dimension}; repeat for several values (OR). Applies to metric ${metrics.join(', ')}; with any other metric it is the invalid-filter-dimension error. ${vocabulary}`,
      'x-metrics': metrics,
      schema: { type: 'array', items },
      example: [example],
    };
  });
}

/** A financial route's parameters: its schema's, then one per dimension. */
export const financialParameters = (schema: Schema, notes: Notes = {}, more: Readonly<Record<string, ParameterNotes>> = {}): Json[] => {
  const own = queryParameters(schema, notes, more);
  return [...own, ...dimensionParameters(own)];
};

/** The `Prefer` request header (RFC 7240), taken by the operations that may run heavy work. */
export const PREFER_WAIT: Json = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    '`wait=N` (seconds, decimals allowed) lowers the deadline of the heavy work this request runs (an aggregate computed, a diff, a filtered export, a release loaded) below QUERY_TIMEOUT_MS; it never raises it. Past it: 504 `timeout`. Applied: the answer carries `Preference-Applied: wait=N`.',
  schema: { type: 'string' },
  example: 'wait=10',
};
