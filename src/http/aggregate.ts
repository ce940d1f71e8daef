import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { UnknownMetricError } from '../errors.ts';
import { findDataset, type DatasetDef } from '../registry.ts';
import { computeAggregate, MAX_GROUP_BY, planAggregate, planShape, type AggregatePlan } from '../query/aggregate.ts';
import type { YearRange } from '../query/filters.ts';
import type { LoadedRelease } from '../store/loader.ts';
import { canonicalScope, type QueryScope } from '../query/scope.ts';
import type { Services } from '../services.ts';
import { renderAggregate } from './aggregate-formats.ts';
import { respondCacheable } from './cacheable.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from './dimension-filters.ts';
import { negotiateFormat, type Format } from './formats.ts';
import { holdRelease, setNextPage } from './paging.ts';
import { cursorParam, limitParam, parseQuery, periodParam, releaseParam, repeatable, single } from './params.ts';

// GET /v1/aggregate: totals, averages, minima and maxima of a financial dataset's
// metrics over any filter, grouped by up to six dimensions (docs/api.md "Aggregates").

const groupByParam = v.optional(
  v.pipe(
    // Repeated (`group_by=region&group_by=year`) or comma-separated (`group_by=region,year`).
    repeatable(v.string()),
    v.transform((values) => values.flatMap((value) => value.split(','))),
    v.check((names) => names.every((name) => name !== ''), 'Expected dimension names, without empty ones'),
    v.check((names) => new Set(names).size === names.length, 'Each dimension may be grouped by once'),
    v.check((names) => names.length <= MAX_GROUP_BY, `At most ${MAX_GROUP_BY} dimensions`),
  ),
  [],
);

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
    period: periodParam,
    limit: limitParam(1000),
    cursor: cursorParam,
    release: releaseParam,
    group_by: groupByParam,
    measure: v.optional(repeatable(v.pipe(v.string(), v.minLength(1, 'Expected <metric> or <metric>:<fn>')))),
    order: v.optional(single(v.pipe(v.string(), v.minLength(1, 'Expected a group_by dimension or a measure key')))),
    rollup: v.pipe(v.optional(single(v.picklist(['true', 'false'], 'Expected true or false')), 'false'), v.transform((text) => text === 'true')),
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor', 'release', 'group_by', 'measure', 'order', 'rollup']);

export async function handler(ctx: Context, services: Services): Promise<void> {
  const { metric, period, limit, cursor, release, group_by, measure, order, rollup, ...params } = parseQuery(schema, ctx.query);
  const def = findDataset(metric, 'financial');
  if (!def) throw new UnknownMetricError(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const plan = planAggregate(def, { groupBy: group_by, measures: measure, order, rollup, filters });
  const format = negotiateFormat(ctx.get('accept'));
  ctx.vary('Accept');
  // Held while answering: the kept result needs no tables, but the rows are read from this release's store.
  const hold = await holdRelease(services, { cursor, release });
  try {
    await respondFrom(ctx, services, { def, plan, period, limit, cursor, format }, hold.release);
  } finally {
    hold.letGo();
  }
}

interface AggregateRequest {
  readonly def: DatasetDef;
  readonly plan: AggregatePlan;
  readonly period: { readonly text: string; readonly years: YearRange } | undefined;
  readonly limit: number;
  readonly cursor: string | undefined;
  readonly format: Format;
}

async function respondFrom(ctx: Context, services: Services, { def, plan, period, limit, cursor, format }: AggregateRequest, release: LoadedRelease): Promise<void> {
  const served = release.datasets.get(def.name)!;
  const scope: QueryScope = { release: release.id, dataset: def.name, filters: plan.filters, period: period?.text, shape: planShape(plan) };
  const after = cursor === undefined ? -1 : services.cursors.decode(cursor, scope);
  const whole = JSON.stringify(['aggregate', ...canonicalScope(scope)]);
  const meta = {
    dataset: def.name,
    metric: def.name,
    group_by: plan.groupBy,
    measures: plan.measures.map((m) => m.key),
    filters_applied: filtersApplied(plan.filters, period),
    ...(plan.omitted.length > 0 && { omitted: plan.omitted }),
  };
  const render = async () => {
    const result = await services.aggregates.get(whole, [release.id], () =>
      computeAggregate(def, served.aggregates, plan, period?.years, services.aggregateMaxGroups),
    );
    const start = after + 1;
    const end = Math.min(start + limit, result.count);
    const next = end < result.count ? services.cursors.encode(scope, end - 1) : '';
    const dictionaries = plan.groupBy.map((d) => served.aggregates.dictionaries[def.dimensions.indexOf(d)]!);
    const envelope = {
      meta: { ...meta, row_count: Math.max(0, end - start), release: release.id },
      pagination: { cursor: next, has_more: next !== '' },
    };
    return { body: renderAggregate(format.name, { plan, result, dictionaries, start, end }, envelope), next: next || undefined };
  };
  const key = JSON.stringify([format.name, whole, limit, after]);
  const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: release.id });
  setNextPage(ctx, format, next);
}

export function register(router: Router, services: Services): void {
  router.get('/v1/aggregate', (ctx) => handler(ctx, services));
}
