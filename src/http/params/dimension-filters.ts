import * as v from 'valibot';
import { InvalidFilterDimensionError } from '../../errors/index.ts';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../../registry.ts';
import { repeatable, unknownKeys } from './params.ts';

// The dimension filters every financial endpoint takes (/v1/financials, /v1/aggregate),
// with one set of rules and error texts.

/** `year` is a dimension of every financial dataset, and the only integer one. */
export const yearParam = v.optional(
  repeatable(
    v.pipe(
      v.string(),
      v.regex(/^-?\d{1,9}$/, 'Expected an integer year; for a span repeat it (year=2019&year=2020) or send period=2019-01-01:2024-12-31'),
    ),
  ),
);

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
  if (unknown !== undefined) throw new InvalidFilterDimensionError(unknown, def.name, def.dimensions, elsewhere(unknown, def.name));
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

/** The endpoint that takes a parameter this one does not, by parameter: a user who sent it meant that endpoint. */
const OWNERS: ReadonlyArray<readonly [readonly string[], string, (param: string, metric: string) => string]> = [
  [
    ['group_by', 'measure', 'order', 'rollup', 'compare', 'share', 'per', 'having', 'index', 'cagr', 'latest', 'shape'],
    '/v1/aggregate',
    (param, metric) => `/v1/aggregate?metric=${metric}&group_by=country&${param === 'group_by' ? 'fx=USD' : `${param}=…`}`,
  ],
  [['from', 'to', 'change'], '/v1/revisions', (param, metric) => `/v1/revisions?metric=${metric}&${param}=…`],
  [['limit', 'cursor'], '/v1/financials', (param, metric) => `/v1/financials?metric=${metric}&${param}=…`],
];

/** A hint naming the endpoint that takes `param`, when one does (undefined for a plain typo). */
function elsewhere(param: string, metric: string): string | undefined {
  const owner = OWNERS.find(([params]) => params.includes(param));
  return owner && `\`${param}\` is a parameter of ${owner[1]}, not a filter here: GET ${owner[2](param, metric)}`;
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
