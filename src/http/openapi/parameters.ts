import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { type Endpoint, querySchema } from '../../query/options/endpoint.ts';
import { type OptionExample, type QueryOption, repeats as takesList } from '../../query/options/option.ts';
import { dimensionDef, FINANCIAL_DATASETS } from '../../registry.ts';
import type { Json } from './json.ts';

// An endpoint's parameters in the OpenAPI document, from its options (options/):
// names, patterns, defaults, closed sets and which are required come from what the
// code validates, descriptions and the rest from each option's descriptor, and every
// example names a request it works in (`x-request`), which test/option-keys.test.ts
// sends. Which example Swagger UI fills in is prefill.ts's to say.

/** A parameter's example as the document names it: `name=value`, never an integer-like key, which JavaScript would order first. */
export const exampleName = (name: string, value: unknown) => `${name}=${[value].flat().join(',')}`;

/** `request` with `name` set to `value` (several values: repeated). */
function withValue(request: string, name: string, value: string | readonly string[]): string {
  const url = new URL(request, 'http://x');
  url.searchParams.delete(name);
  for (const one of [value].flat()) url.searchParams.append(name, one);
  // URLSearchParams writes ':' and ',' escaped; the requests are read by people, so keep them as written.
  return `${url.pathname}${url.search.replaceAll('%3A', ':').replaceAll('%2C', ',')}`;
}

/** The named examples of a parameter: each value, typed as the parameter is, and the request it works in. */
function examplesOf(name: string, examples: readonly OptionExample[], base: string, typed: (text: string) => unknown, repeats: boolean) {
  return Object.fromEntries(
    examples.map(({ value, request }) => {
      const values = [value].flat().map(typed);
      const shown = repeats ? values : values[0];
      return [exampleName(name, value), { value: shown, 'x-request': request ?? withValue(base, name, value) }];
    }),
  );
}

/** The first value of a valibot action of `type` anywhere in `schema`'s pipes (an integer's bounds). */
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

function optionParameter(endpoint: Endpoint, name: string, option: QueryOption, property: Json, required: boolean): Json {
  const repeats = takesList(option);
  const { anyOf: _anyOf, type: _type, items, default: fallback, ...rest } = property;
  const values = option.values && [...new Set(FINANCIAL_DATASETS.flatMap((def) => option.values!(def)))];
  const bounds = option.integer && {
    minimum: actionRequirement(option.schema, 'min_value'),
    maximum: actionRequirement(option.schema, 'max_value'),
  };
  const typed = option.integer ? Number : option.client === 'flag' ? (text: string) => text === 'true' : String;
  const itemSchema = option.integer
    ? { type: 'integer', ...bounds }
    : option.client === 'flag'
      ? { type: 'boolean' }
      : { ...(repeats ? (items as Json) : { type: 'string', ...rest }), ...(values && (option.openapi?.(values) ?? { enum: values })) };
  const typedDefault = fallback === undefined ? undefined : typed(String(fallback));
  return {
    name,
    in: 'query',
    required,
    ...(repeats ? { style: 'form', explode: true } : {}),
    description: option.description,
    schema: repeats
      ? { type: 'array', items: itemSchema }
      : { ...itemSchema, ...(typedDefault !== undefined && { default: typedDefault }) },
    examples: examplesOf(name, option.examples, endpoint.example, typed, repeats),
    ...(option.explore && { 'x-explore': option.explore }),
  };
}

/**
 * One parameter per dimension of any financial dataset, saying which datasets take it,
 * with its registry examples, each tried in the endpoint's request on the first such dataset.
 */
function dimensionParameters(endpoint: Endpoint): Json[] {
  const dimensions = [...new Set(FINANCIAL_DATASETS.flatMap((d) => d.dimensions))];
  return dimensions.map((dimension) => {
    const metrics = FINANCIAL_DATASETS.filter((d) => d.dimensions.includes(dimension)).map((d) => d.name);
    const { meaning, examples, values, open } = dimensionDef(dimension);
    const named = values ? Object.entries(values).map(([value, means]) => `\`${value}\`: ${means}`) : [];
    const vocabulary = !values
      ? "Its values are the release's (no closed set: an answer without rows names the values it does not hold in `meta.warnings`)."
      : open
        ? `Among its values: ${named.join('; ')}; the others are the release's.`
        : `One of: ${named.join('; ')}.`;
    const integer = dimension === 'year';
    const items = integer
      ? { type: 'integer' }
      : values && !open
        ? { type: 'string', enum: Object.keys(values), 'x-enumDescriptions': values }
        : { type: 'string' };
    const base = endpoint.requestFor!(metrics[0]!);
    return {
      name: dimension,
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: `${meaning}. Filter by ${dimension}; repeat for several values (OR). Applies to metric ${metrics.join(', ')}; with any other metric it is the invalid-filter-dimension error. ${vocabulary}`,
      'x-metrics': metrics,
      schema: { type: 'array', items },
      examples: examplesOf(
        dimension,
        examples.map((value) => ({ value: [value] })),
        base,
        integer ? Number : String,
        true,
      ),
    };
  });
}

/** The `Prefer` request header (RFC 7240), taken by every data endpoint, which may run heavy work. */
export const PREFER_WAIT: Json = {
  name: 'Prefer',
  in: 'header',
  required: false,
  description:
    '`wait=N` (seconds, decimals allowed) lowers the deadline of the heavy work this request runs (an aggregate computed, a diff, a filtered export, a release loaded) below QUERY_TIMEOUT_MS; it never raises it. Past it: 504 `timeout`. Applied: the answer carries `Preference-Applied: wait=N`.',
  schema: { type: 'string' },
  examples: { 'Prefer=wait=10': { value: 'wait=10' } },
};

/** An endpoint's parameters: its options, then (with dimension filters) one per dimension, then `Prefer`. */
export function parametersOf(endpoint: Endpoint): Json[] {
  const schema = querySchema(endpoint);
  const converted = toJsonSchema(schema, { errorMode: 'ignore' }) as { properties: Record<string, Json> };
  const missing = v.safeParse(schema, {});
  const required = new Set(missing.success ? [] : missing.issues.map((issue) => String(issue.path?.[0]?.key)));
  const own = Object.entries(endpoint.options).map(([name, option]) =>
    optionParameter(endpoint, name, option, converted.properties[name]!, required.has(name)),
  );
  return [...own, ...(endpoint.others === 'filters' ? dimensionParameters(endpoint) : []), PREFER_WAIT];
}
