import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { findDataset, INTEGER_DIMENSIONS } from '../registry.ts';
import { InvalidFilterDimensionError, UnknownMetricError } from '../errors.ts';
import type { Services } from '../services.ts';
import { respondWithPage } from './paging.ts';
import { cursorParam, limitParam, parseQuery, periodParam, repeatable, single, unknownKeys } from './params.ts';

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
    period: periodParam,
    limit: limitParam,
    cursor: cursorParam,
    // `year` is a dimension of every financial dataset, and the only integer one.
    year: v.optional(repeatable(v.pipe(v.string(), v.regex(/^-?\d{1,9}$/, 'Expected an integer year')))),
  },
  // Every other parameter is a filter; whether it is a dimension depends on `metric`.
  repeatable(v.string()),
);

/** Parameters that shape the request rather than filter rows. */
const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor']);

export async function handler(ctx: Context, services: Services): Promise<void> {
  const { metric, period, limit, cursor, ...filterParams } = parseQuery(schema, ctx.query);
  const def = findDataset(metric, 'financial');
  if (!def) throw new UnknownMetricError(metric);
  const [unknown] = unknownKeys(ctx.query, (key) => CONTROL_PARAMS.has(key) || def.dimensions.includes(key));
  if (unknown !== undefined) throw new InvalidFilterDimensionError(unknown, metric, def.dimensions);
  const filters = canonicalFilters(def.dimensions, filterParams);
  const applied = Object.fromEntries(filters);
  if (period) applied.period = [period.text];
  await respondWithPage(ctx, services, {
    dataset: def.name,
    filters,
    period,
    limit,
    cursor,
    meta: (rowCount) => ({ dataset: def.name, metric: def.name, filters_applied: applied, row_count: rowCount }),
  });
}

/**
 * Filters in one form however they were sent, so equal requests get equal bytes:
 * dimensions in catalog order, values deduplicated and sorted (by UTF-16 code
 * units; years as integers, numerically, so `year=02020` is `year=2020`).
 */
function canonicalFilters(dimensions: readonly string[], params: Record<string, string[] | undefined>): Map<string, string[]> {
  const filters = new Map<string, string[]>();
  for (const dimension of dimensions) {
    const values = params[dimension];
    if (values === undefined) continue;
    filters.set(
      dimension,
      INTEGER_DIMENSIONS.has(dimension)
        ? [...new Set(values.map(Number))].sort((a, b) => a - b).map(String)
        : [...new Set(values)].sort(),
    );
  }
  return filters;
}

export function register(router: Router, services: Services): void {
  router.get('/v1/financials', (ctx) => handler(ctx, services));
}
