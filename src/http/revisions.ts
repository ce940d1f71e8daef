import fs from 'node:fs/promises';
import path from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { InvalidParametersError, NotReadyError, UnknownMetricError, UnknownReleaseError } from '../errors.ts';
import { findDataset } from '../registry.ts';
import { CHANGES, computeRevisions } from '../query/revisions.ts';
import { canonicalScope, type QueryScope } from '../query/scope.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from './dimension-filters.ts';
import { negotiateFormat } from './formats.ts';
import { setNextPage } from './paging.ts';
import { cursorParam, limitParam, parseQuery, periodParam, releaseParam, repeatable, single } from './params.ts';
import { renderRevisions } from './revision-formats.ts';

// GET /v1/revisions: the rows of a financial dataset that differ between two
// published releases (docs/api.md "Revisions").

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
    period: periodParam,
    limit: limitParam(100),
    cursor: cursorParam,
    from: releaseParam,
    to: releaseParam,
    change: v.optional(repeatable(v.picklist(CHANGES, 'Expected added, removed or changed'))),
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor', 'from', 'to', 'change']);

export async function handler(ctx: Context, services: Services): Promise<void> {
  const { metric, period, limit, cursor, from: fromParam, to: toParam, change, ...params } = parseQuery(schema, ctx.query);
  const def = findDataset(metric, 'financial');
  if (!def) throw new UnknownMetricError(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const current = services.release.get();
  if (!current) throw new NotReadyError();
  const to = toParam ?? current.id;
  if (!services.published.has(to)) throw new UnknownReleaseError(to);
  const from = fromParam ?? services.published.previous(to);
  if (from === undefined) throw new InvalidParametersError({ from: [`No release was published before ${to}: name the release to compare with, as from=YYYY-MM`] });
  if (!services.published.has(from)) throw new UnknownReleaseError(from);
  const changes = change && [...new Set(change)].sort((a, b) => CHANGES.indexOf(a) - CHANGES.indexOf(b));

  // The cursor and cache key name `to` as their release, and `from` and the kinds of change as the shape.
  const scope: QueryScope = { release: to, dataset: def.name, filters, period: period?.text, shape: JSON.stringify(['revisions', from, changes ?? null]) };
  const after = cursor === undefined ? -1 : services.cursors.decode(cursor, scope);
  const whole = JSON.stringify(['revisions', ...canonicalScope(scope)]);
  const format = negotiateFormat(ctx.get('accept'));
  ctx.vary('Accept');
  const file = (id: string) => {
    const { dir, manifest } = services.published.get(id)!;
    return path.join(dir, manifest.datasets[def.name]!.file);
  };
  const files = { from: file(from), to: file(to) };
  const render = async () => {
    const result = await services.revisions
      .get(whole, [from, to], () => computeRevisions(services.db, { def, ...files, filters, period: period?.years, changes }))
      .catch(async (err: Error) => {
        // Removed by `etl prune` under the request: the release is gone, not broken.
        for (const [id, name] of [[from, files.from], [to, files.to]]) if (!(await fs.access(name!).then(() => true, () => false))) throw new UnknownReleaseError(id!);
        throw err;
      });
    const start = after + 1;
    const end = Math.min(start + limit, result.count);
    const next = end < result.count ? services.cursors.encode(scope, end - 1) : '';
    const meta = {
      dataset: def.name,
      metric: def.name,
      from,
      to,
      ...(changes && { change: changes }),
      filters_applied: filtersApplied(filters, period),
      row_count: Math.max(0, end - start),
    };
    return { body: renderRevisions(format.name, { def, result, start, end }, { meta, pagination: { cursor: next, has_more: next !== '' } }), next: next || undefined };
  };
  const key = JSON.stringify([format.name, whole, limit, after]);
  const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: to });
  setNextPage(ctx, format, next);
}

export function register(router: Router, services: Services): void {
  router.get('/v1/revisions', (ctx) => handler(ctx, services));
}
