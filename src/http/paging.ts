import type { Context } from 'koa';
import { InvalidCursorError, NotReadyError } from '../errors.ts';
import { whereClauses, type Filters } from '../query/filters.ts';
import { readPage } from '../query/page.ts';
import { canonicalScope } from '../query/scope.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';
import { negotiateFormat, type Format } from './formats.ts';
import type { ReleaseHold } from '../store/current-release.ts';
import type { LoadedRelease } from '../store/loader.ts';

export interface PageRequest {
  readonly dataset: string;
  readonly filters: Filters;
  readonly period?: { readonly text: string; readonly years: { from: number; to: number } };
  readonly limit: number;
  readonly cursor?: string;
  /** The envelope's `meta` for a page of `rowCount` rows. */
  readonly meta: (rowCount: number) => Record<string, unknown>;
}

/**
 * Answers with one keyset page in the format `Accept` asks for (JSON: the spec's
 * envelope). The page is the same for every request with the same release,
 * canonical scope, limit, cursor position and format, so that is its cache key. On
 * a miss DuckDB picks the rows and the format renders them from the column store.
 * While more pages follow, `Link: rel="next"` points at the next one; bodies with no
 * room for the cursor (CSV, Arrow) also carry it as `X-Next-Cursor`.
 */
export async function respondWithPage(ctx: Context, services: Services, request: PageRequest): Promise<void> {
  const format = negotiateFormat(ctx.get('accept'));
  ctx.vary('Accept');
  const hold = holdRelease(services, request.cursor);
  try {
    await respondFrom(ctx, services, request, format, hold.release);
  } finally {
    hold.letGo();
  }
}

async function respondFrom(ctx: Context, services: Services, request: PageRequest, format: Format, release: LoadedRelease): Promise<void> {
  const served = release.datasets.get(request.dataset)!;
  const scope = { release: release.id, dataset: request.dataset, filters: request.filters, period: request.period?.text };
  const after = request.cursor === undefined ? -1 : services.cursors.decode(request.cursor, scope);
  const key = JSON.stringify([format.name, ...canonicalScope(scope), request.limit, after]);
  const render = async () => {
    const clauses = whereClauses(served, request.filters, request.period?.years);
    const page = await readPage(services.db, served, clauses, request.limit, after);
    const cursor = page.nextAfter === undefined ? '' : services.cursors.encode(scope, page.nextAfter);
    const envelope = { meta: { ...request.meta(page.rids.length), release: release.id }, pagination: { cursor, has_more: cursor !== '' } };
    return { body: format.render(served, page.rids, envelope), next: cursor || undefined };
  };
  const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: release.id });
  setNextPage(ctx, format, next);
}

/**
 * Holds the release a request reads, for the caller to let go when it has answered:
 * the served one, or the one its cursor was issued on while that is retained after a
 * switch; past its grace period the cursor is invalid.
 */
export function holdRelease(services: Pick<Services, 'release' | 'cursors'>, cursor: string | undefined): ReleaseHold {
  if (!services.release.get()) throw new NotReadyError();
  const named = cursor === undefined ? undefined : services.cursors.releaseOf(cursor);
  const hold = services.release.hold(named);
  if (!hold) throw new InvalidCursorError();
  return hold;
}

/** While more pages follow: `Link: rel="next"`, and `X-Next-Cursor` for bodies with no room for the cursor. */
export function setNextPage(ctx: Context, format: Format, next: string | undefined): void {
  if (next === undefined) return;
  ctx.set('Link', `<${nextPage(ctx, next)}>; rel="next"`);
  if (format.name !== 'json') ctx.set('X-Next-Cursor', next);
}

/** This request's path and query, root-relative, with `cursor` replaced by the next one. */
function nextPage(ctx: Context, cursor: string): string {
  const query = new URLSearchParams(ctx.querystring);
  query.delete('cursor');
  query.append('cursor', cursor);
  return `${ctx.path}?${query}`;
}
