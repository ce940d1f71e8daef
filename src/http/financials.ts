import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { findDataset } from '../registry.ts';
import { UnknownMetricError } from '../errors.ts';
import type { Services } from '../services.ts';
import { respondWithPage } from './paging.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from './dimension-filters.ts';
import { cursorParam, limitParam, parseQuery, periodParam, releaseParam, single } from './params.ts';

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
    period: periodParam,
    limit: limitParam(100),
    cursor: cursorParam,
    release: releaseParam,
    year: yearParam,
  },
  filterParams,
);

/** Parameters that shape the request rather than filter rows. */
const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor', 'release']);

export async function handler(ctx: Context, services: Services): Promise<void> {
  const { metric, period, limit, cursor, release, ...params } = parseQuery(schema, ctx.query);
  const def = findDataset(metric, 'financial');
  if (!def) throw new UnknownMetricError(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const applied = filtersApplied(filters, period);
  await respondWithPage(ctx, services, {
    dataset: def.name,
    filters,
    period,
    limit,
    cursor,
    release,
    meta: (rowCount) => ({ dataset: def.name, metric: def.name, filters_applied: applied, row_count: rowCount }),
  });
}

export function register(router: Router, services: Services): void {
  router.get('/v1/financials', (ctx) => handler(ctx, services));
}
