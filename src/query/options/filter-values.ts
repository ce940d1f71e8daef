import { InvalidFilterDimensionError } from '../../errors/index.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../../registry.ts';
import type { Endpoint } from './endpoint.ts';
import { ENDPOINTS } from './endpoints.ts';
import { unknownKeys } from './params.ts';

// The dimension filters every financial endpoint takes, with one set of rules and
// error texts: whatever parameter an endpoint does not list as an option is a filter
// on a dimension of the dataset named (options/filters.ts parses them).

/**
 * The request's filters on `def`'s dimensions, in one form however they were sent,
 * so equal requests get equal bytes: dimensions in catalog order, values deduplicated
 * and sorted (by UTF-16 code units; years as integers, numerically, so `year=02020`
 * is `year=2020`). A parameter that is neither an option of `endpoint` nor a dimension
 * is the spec's invalid-filter-dimension error.
 */
export function dimensionFilters(
  query: object,
  def: DatasetDef,
  endpoint: Endpoint,
  values: Readonly<Record<string, unknown>>,
): Map<string, string[]> {
  const [unknown] = unknownKeys(query, (key) => Object.hasOwn(endpoint.options, key) || def.dimensions.includes(key));
  if (unknown !== undefined)
    throw new InvalidFilterDimensionError(unknown, def.name, def.dimensions, elsewhere(unknown, def.name, endpoint));
  const filters = new Map<string, string[]>();
  for (const dimension of def.dimensions) {
    const given = values[dimension] as string[] | undefined;
    if (given === undefined) continue;
    filters.set(
      dimension,
      INTEGER_DIMENSIONS.has(dimension) ? [...new Set(given.map(Number))].sort((a, b) => a - b).map(String) : [...new Set(given)].sort(),
    );
  }
  return filters;
}

/**
 * A hint naming the first other endpoint with dimension filters that lists `param` as
 * an option: a user who sent it here meant that one. Undefined for a plain typo.
 */
function elsewhere(param: string, metric: string, here: Endpoint): string | undefined {
  const owner = ENDPOINTS.find((e) => e !== here && e.requestFor && Object.hasOwn(e.options, param));
  if (!owner?.requestFor) return undefined;
  const request = owner.requestFor(metric);
  const example = new URLSearchParams(request.split('?')[1]).has(param) ? request : `${request}&${param}=…`;
  return `\`${param}\` is a parameter of ${owner.path}, not a filter here: GET ${example}`;
}

/** `meta.filters_applied`: each filter's values, and `period` as sent. */
export function filtersApplied(
  filters: ReadonlyMap<string, readonly string[]>,
  period: { readonly text: string } | undefined,
): Record<string, readonly string[]> {
  const applied: Record<string, readonly string[]> = Object.fromEntries(filters);
  if (period) applied.period = [period.text];
  return applied;
}
