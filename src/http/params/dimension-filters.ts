import * as v from 'valibot';
import { InvalidFilterDimensionError } from '../../errors/index.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../../registry.ts';
import { repeatable, unknownKeys } from './params.ts';

// The dimension filters every financial endpoint takes (/v1/financials, /v1/aggregate),
// with one set of rules and error texts.

/** `year` is a dimension of every financial dataset, and the only integer one. */
export const yearParam = v.optional(repeatable(v.pipe(v.string(), v.regex(/^-?\d{1,9}$/, 'Expected an integer year'))));

/** Every parameter outside an endpoint's own is a filter; whether it is a dimension depends on `metric`. */
export const filterParams = repeatable(v.string());

/**
 * The request's filters on `def`'s dimensions, in one form however they were sent,
 * so equal requests get equal bytes: dimensions in catalog order, values deduplicated
 * and sorted (by UTF-16 code units; years as integers, numerically, so `year=02020`
 * is `year=2020`). A parameter that is neither one of `control` nor a dimension is
 * the spec's invalid-filter-dimension error.
 */
export function dimensionFilters(
  query: object,
  def: DatasetDef,
  control: ReadonlySet<string>,
  params: Record<string, string[] | undefined>,
): Map<string, string[]> {
  const [unknown] = unknownKeys(query, (key) => control.has(key) || def.dimensions.includes(key));
  if (unknown !== undefined) throw new InvalidFilterDimensionError(unknown, def.name, def.dimensions);
  const filters = new Map<string, string[]>();
  for (const dimension of def.dimensions) {
    const values = params[dimension];
    if (values === undefined) continue;
    filters.set(
      dimension,
      INTEGER_DIMENSIONS.has(dimension) ? [...new Set(values.map(Number))].sort((a, b) => a - b).map(String) : [...new Set(values)].sort(),
    );
  }
  return filters;
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
