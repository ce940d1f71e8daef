import type { Context } from 'koa';
import { InvalidCursorError, NotReadyError, ReleaseLoadingError, ReleaseUnavailableError, UnknownReleaseError } from '../errors.ts';
import { whereClauses, type Filters } from '../query/filters.ts';
import { readPage } from '../query/page.ts';
import { canonicalScope } from '../query/scope.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';
import { negotiateFormat, type Format } from './formats.ts';
import type { ReleaseHold } from '../store/resident-releases.ts';
import type { LoadedRelease } from '../store/loader.ts';
import { VintageUnavailableError } from '../store/vintages.ts';

export interface PageRequest {
  readonly dataset: string;
  readonly filters: Filters;
  readonly period?: { readonly text: string; readonly years: { from: number; to: number } };
  readonly limit: number;
  readonly cursor?: string;
  /** The `release=` asked for; the current one when absent. */
  readonly release?: string;
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
  const hold = await holdRelease(services, request);
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

type ReleaseServices = Pick<Services, 'release' | 'cursors' | 'published' | 'vintages' | 'releaseWaitMs'>;

/**
 * Holds the release a request reads, for the caller to let go when it has answered:
 * the one `release=` names, else the one its cursor was issued on, else the current
 * one. A published release that is not loaded is loaded first, waiting at most
 * RELEASE_LOAD_WAIT_MS. A cursor whose release is no longer published is invalid; a
 * cursor from another release than `release=` fails its MAC.
 */
export async function holdRelease(services: ReleaseServices, asked: { cursor?: string; release?: string }): Promise<ReleaseHold> {
  const current = services.release.get();
  if (!current) throw new NotReadyError();
  const id = asked.release ?? (asked.cursor === undefined ? undefined : services.cursors.releaseOf(asked.cursor));
  if (id === undefined || id === current.id) return services.release.hold()!;
  // Before the loaded ones: a release withdrawn by a rollback may still be loaded.
  if (!services.published.has(id)) throw asked.release === undefined ? new InvalidCursorError() : new UnknownReleaseError(id);
  return services.release.hold(id) ?? loadAndHold(services, id);
}

async function loadAndHold(services: ReleaseServices, id: string): Promise<ReleaseHold> {
  const held = services.vintages.hold(id);
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, services.releaseWaitMs, 'late')));
  try {
    const hold = await Promise.race([held, waited]);
    if (hold !== 'late') return hold;
    // Whoever gets the hold after this request gave up lets it go at once.
    void held.then((late) => late.letGo(), () => {});
    throw new ReleaseLoadingError(id);
  } catch (err) {
    throw err instanceof VintageUnavailableError ? new ReleaseUnavailableError(id) : err;
  } finally {
    clearTimeout(timer);
  }
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
