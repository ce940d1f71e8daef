import type { Context } from 'koa';
import { InvalidCursorError, NotReadyError } from '../errors.ts';
import { whereClauses, type Filters } from '../query/filters.ts';
import { readPage } from '../query/page.ts';
import { canonicalScope } from '../query/scope.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';

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
 * Answers with one keyset page in the spec's envelope. The page is the same for
 * every request with the same release, canonical scope, limit and cursor position,
 * so that is its cache key. On a miss DuckDB picks the rows, their JSON is rendered
 * from the column store, and only meta and pagination are stringified.
 */
export async function respondWithPage(ctx: Context, services: Services, request: PageRequest): Promise<void> {
  const serving = services.release.get();
  if (!serving) throw new NotReadyError();
  // A cursor keeps paging through the release it was issued on while that release
  // is retained after a switch; past its grace period the cursor is invalid.
  const named = request.cursor === undefined ? undefined : services.cursors.releaseOf(request.cursor);
  const release = named === undefined ? serving : services.release.find(named);
  if (!release) throw new InvalidCursorError();
  const served = release.datasets.get(request.dataset)!;
  const scope = { release: release.id, dataset: request.dataset, filters: request.filters, period: request.period?.text };
  const after = request.cursor === undefined ? -1 : services.cursors.decode(request.cursor, scope);
  const key = JSON.stringify([...canonicalScope(scope), request.limit, after]);
  await respondCacheable(ctx, services, key, async () => {
    const clauses = whereClauses(served, request.filters, request.period?.years);
    const page = await readPage(services.db, served, clauses, request.limit, after);
    const pagination = {
      cursor: page.nextAfter === undefined ? '' : services.cursors.encode(scope, page.nextAfter),
      has_more: page.nextAfter !== undefined,
    };
    return served.json.render(
      page.rids,
      `{"meta":${JSON.stringify({ ...request.meta(page.rids.length), release: release.id })},"data":[`,
      `],"pagination":${JSON.stringify(pagination)}}`,
    );
  });
}
