import type { HeavyKind } from '../../admission/queue.ts';
import type { Cursor } from '../../query/cursor.ts';
import type { Compute, KeptResults } from '../../query/kept-results.ts';
import { canonicalScope, type QueryScope } from '../../query/scope.ts';
import type { Format } from '../../render/formats.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { respondCacheable } from './cacheable.ts';
import { clientGone, heavyFailure, heavyTerms } from './heavy-work.ts';
import { setNextPage } from './paging.ts';
import { requestKey } from './request-key.ts';

/** Where a page of a kept result starts and ends, and the envelope's pagination (the next page's cursor while more follow). */
export interface Slice {
  readonly start: number;
  readonly end: number;
  readonly pagination: { readonly cursor: string; readonly has_more: boolean };
}

/** A page of a result computed whole and kept for the pages after it (an aggregate's groups, a revisions diff). */
export interface KeptPageRequest<T> {
  /** The heavy work computing the result is, for its key's turn. */
  readonly kind: Extract<HeavyKind, 'aggregate' | 'revisions' | 'history'>;
  readonly kept: KeptResults<T>;
  /** What the result depends on; one kept result serves every format. */
  readonly scope: QueryScope;
  /** The page's format, which its cursors are bound to. */
  readonly format: Format;
  readonly cursor?: Cursor;
  /** Rows per page; undefined for every row after the cursor (a whole CSV or Arrow answer). */
  readonly limit: number | undefined;
  /** The releases the result is read from: it is forgotten once one of them is no longer published. */
  readonly releases: readonly string[];
  /** Computes the result; `signal` aborts when it is to stop (its deadline passed, or every request waiting for it has gone). */
  readonly compute: (signal: AbortSignal) => Promise<T>;
  readonly count: (result: T) => number;
  /** The page's body: the result's rows `slice.start` to `slice.end`, with `slice.pagination`. */
  readonly render: (result: T, slice: Slice) => Buffer | Promise<Buffer>;
}

/**
 * Answers one page of a kept result: the result is computed in the key's turn for heavy
 * work the first time any page asks for it, then every page of the walk slices the same
 * result (query/kept-results.ts), and each page's body is a cacheable answer of its own.
 * The answer's Cache-Control follows the scope's release. The computation is stopped
 * by its deadline, or when every request waiting for it has gone.
 */
export async function respondWithKeptPage<T>(ctx: RequestContext, services: Services, request: KeptPageRequest<T>): Promise<void> {
  const { format, limit } = request;
  const scope = { ...request.scope, format: format.name };
  const after = request.cursor === undefined ? -1 : services.cursors.after(request.cursor, scope);
  const whole = keptKey(request.kind, scope);
  const render = () =>
    readKept(ctx, services, request, async (result) => {
      const slice = slicePage(services, scope, request.count(result), after, limit);
      return { body: await request.render(result, slice), next: slice.pagination.cursor || undefined };
    });
  const key = JSON.stringify([format.name, whole, limit, after]);
  const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: scope.release });
  setNextPage(ctx, format.name, next);
}

/** The key a result is kept under: the same for every format and page of one query. */
const keptKey = (kind: string, scope: QueryScope) => JSON.stringify([kind, ...canonicalScope(scope)]);

/**
 * Runs `use` on the kept result of `request`'s query, computed in the key's turn for
 * heavy work when none is kept: what a page reads, and what a whole answer streams
 * from. The result is held until `use` settles. Identical requests share one
 * computation, in the turn of the first: each waits for it until its own deadline and
 * pays its share of its time (query/kept-results.ts), and it stops once none waits.
 */
export async function readKept<T, R>(
  ctx: RequestContext,
  services: Services,
  request: Pick<KeptPageRequest<T>, 'kind' | 'kept' | 'scope' | 'releases' | 'compute'>,
  use: (result: T) => R | Promise<R>,
): Promise<R> {
  const { kind, kept } = request;
  const key = keptKey(kind, request.scope);
  // A kept result is read without a turn, a deadline or a charge: it is light work.
  const terms = kept.has(key) ? undefined : await heavyTerms(ctx, services, kind);
  const compute: Compute<T> = (stop, running) =>
    services.admission.run(
      terms?.key ?? requestKey(ctx).id,
      kind,
      (own) => {
        running();
        return request.compute(own);
      },
      { signal: stop },
    );
  let reading = false;
  const read = (result: T) => {
    reading = true;
    return use(result);
  };
  try {
    return await kept.read(key, request.releases, compute, read, {
      signal: clientGone(ctx),
      deadlineMs: terms?.deadlineMs,
      charged: terms?.charge,
    });
  } catch (err) {
    throw reading || !terms ? err : heavyFailure(err, services, kind, terms);
  } finally {
    // Shared work that ended before this answer has charged it already: shown on it.
    await terms?.charged();
  }
}

/**
 * The page of a kept result of `count` rows that follows position `after` (-1 for the
 * first page): `limit` rows at most (every row left without one), and while more follow, the cursor to the next
 * one, encoding the position of this page's last row in `scope`.
 */
function slicePage(services: Pick<Services, 'cursors'>, scope: QueryScope, count: number, after: number, limit: number | undefined): Slice {
  const start = after + 1;
  const end = limit === undefined ? count : Math.min(start + limit, count);
  const cursor = end < count ? services.cursors.encode(scope, end - 1) : '';
  return { start, end: Math.max(start, end), pagination: { cursor, has_more: cursor !== '' } };
}
