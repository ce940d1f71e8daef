import { type Filters, whereClauses } from '../../query/filters.ts';
import { readPage } from '../../query/page.ts';
import { canonicalScope, type QueryScope } from '../../query/scope.ts';
import { unmatchedValues } from '../../query/unmatched.ts';
import { PAGE_FORMATS } from '../../render/formats.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { respondCacheable } from './cacheable.ts';
import { responseFormat } from './negotiate.ts';
import { withRelease } from './request-release.ts';
import { setWarningsHeader } from './warnings-header.ts';

export interface PageRequest {
  readonly dataset: string;
  readonly filters: Filters;
  readonly period?: { readonly text: string; readonly years: { from: number; to: number } };
  readonly limit: number;
  readonly cursor?: string;
  /** The `release=` asked for (or the one `as_of` named); the current one when absent. */
  readonly release?: string;
  /** The instant `as_of` named, when it named the release. */
  readonly asOf?: string;
  /** The `format=` asked for; Accept's choice when absent. */
  readonly format?: (typeof PAGE_FORMATS)[number];
  /** The envelope's `meta` for a page of `rowCount` rows. */
  readonly meta: (rowCount: number) => Record<string, unknown>;
  /** The endpoint's own options, as their parts of the key (query/options/option.ts keyParts). */
  readonly options: QueryScope['options'];
}

/**
 * Answers with one keyset page of a dataset's rows in the format `format=` or `Accept`
 * asks for (JSON: the spec's envelope). The page is the same for every request with the same
 * release, canonical scope, limit, cursor position and format, so that is its cache
 * key. On a miss DuckDB picks the rows and the release's renderers write them.
 */
export async function respondWithPage(ctx: RequestContext, services: Services, request: PageRequest): Promise<void> {
  const format = responseFormat(ctx.get('accept'), request.format, PAGE_FORMATS);
  ctx.vary('Accept');
  const cursor = request.cursor === undefined ? undefined : services.cursors.parse(request.cursor);
  await withRelease(ctx, services, { release: request.release, cursor }, async (release) => {
    const served = release.datasets.get(request.dataset)!;
    const scope: QueryScope = {
      release: release.id,
      dataset: request.dataset,
      filters: request.filters,
      period: request.period?.text,
      asOf: request.asOf,
      options: request.options,
      format: format.name,
    };
    const after = cursor === undefined ? -1 : services.cursors.after(cursor, scope);
    const key = JSON.stringify([format.name, ...canonicalScope(scope), request.limit, after]);
    const render = async () => {
      const clauses = whereClauses(served, request.filters, request.period?.years);
      const page = await readPage(services.db, served, clauses, request.limit, after);
      const cursor = page.nextAfter === undefined ? '' : services.cursors.encode(scope, page.nextAfter);
      // An empty answer says which filter values the release does not hold.
      const warnings = page.rids.length === 0 ? unmatchedValues(served, request.filters) : [];
      const meta = { ...request.meta(page.rids.length), release: release.id, ...(warnings.length > 0 && { warnings }) };
      const envelope = { meta, pagination: { cursor, has_more: cursor !== '' } };
      return { body: served.rows.page(format.name, page.rids, envelope), next: cursor || undefined };
    };
    setWarningsHeader(ctx, format.name, () => unmatchedValues(served, request.filters));
    const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: release.id });
    setNextPage(ctx, format.name, next);
  });
}

/**
 * While more pages follow: `Link: rel="next"` pointing at the next one, and for bodies
 * with no room for the cursor (CSV, Arrow) the cursor itself as `X-Next-Cursor`.
 */
export function setNextPage(ctx: RequestContext, format: string, next: string | undefined): void {
  if (next === undefined) return;
  ctx.set('Link', `<${nextPage(ctx, next)}>; rel="next"`);
  if (format !== 'json') ctx.set('X-Next-Cursor', next);
}

/** This request's path and query, root-relative, with `cursor` replaced by the next one. */
function nextPage(ctx: RequestContext, cursor: string): string {
  const query = new URLSearchParams(ctx.querystring);
  query.delete('cursor');
  query.append('cursor', cursor);
  return `${ctx.path}?${query}`;
}
