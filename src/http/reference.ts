import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { findDataset } from '../registry.ts';
import { InvalidParametersError, UnknownDatasetError } from '../errors.ts';
import type { Services } from '../services.ts';
import { respondWithPage } from './paging.ts';
import { cursorParam, limitParam, parseQuery, releaseParam, single, unknownKeys } from './params.ts';

export const schema = v.object({
  dataset: single(v.pipe(v.string(), v.minLength(1))),
  limit: limitParam(100),
  cursor: cursorParam,
  release: releaseParam,
});

export async function handler(ctx: Context, services: Services): Promise<void> {
  const unknown = unknownKeys(ctx.query, (key) => Object.hasOwn(schema.entries, key));
  if (unknown.length) {
    throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, ['Unknown parameter: /v1/reference accepts dataset, limit, cursor and release']])));
  }
  const { dataset, limit, cursor, release } = parseQuery(schema, ctx.query);
  const def = findDataset(dataset, 'reference');
  if (!def) throw new UnknownDatasetError(dataset);
  await respondWithPage(ctx, services, {
    dataset: def.name,
    filters: new Map(),
    limit,
    cursor,
    release,
    meta: (rowCount) => ({ dataset: def.name, row_count: rowCount }),
  });
}

export function register(router: Router, services: Services): void {
  router.get('/v1/reference', (ctx) => handler(ctx, services));
}
