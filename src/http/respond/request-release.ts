import { Stream } from 'node:stream';
import { DeadlineError } from '../../admission/queue.ts';
import {
  InvalidCursorError,
  NotReadyError,
  ReleaseLoadingError,
  ReleaseLoadRunningError,
  ReleaseUnavailableError,
  UnknownReleaseError,
} from '../../errors/index.ts';
import type { Cursor } from '../../query/cursor.ts';
import { LoadFailedError, LoadRunningError, NotPublishedError } from '../../releases/errors.ts';
import type { LoadedRelease, ReleaseHandle, Releases } from '../../releases/releases.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { heavyWork } from './heavy-work.ts';
import { holdUntilClosed } from './response-closed.ts';

/** What a request asks to read: `release=`, else the release its cursor was issued on, else the current one. */
export interface ReleaseAsked {
  readonly release?: string;
  readonly cursor?: Cursor;
}

type ReleaseServices = Pick<Services, 'releases' | 'admission' | 'metrics' | 'releaseLoadWaitMs' | 'queryTimeoutMs' | 'clock' | 'limits'>;

/**
 * Runs a route's `work` with the release the request reads pinned (docs/api.md
 * "Releases"), and lets go of it once the answer no longer reads it: when the work
 * settles, or, when the answer is a stream (an export, a file), when the response
 * closes, however it ends. A published release that is not loaded is loaded in the
 * request's key's turn for heavy work, within its deadline, and the request waits for
 * it at most RELEASE_LOAD_WAIT_MS (503 release_loading after that, its claim kept to
 * its deadline). The load's running time is charged to the keys that claimed it, and
 * it stops once no claim is left (Releases.acquire). What the releases refuse becomes
 * the answer: not ready, an unknown release (resolveRelease), one that cannot be
 * loaded, or a second release loading for the same key.
 */
export async function withRelease<T>(
  ctx: RequestContext,
  services: ReleaseServices,
  asked: ReleaseAsked,
  work: (release: LoadedRelease) => Promise<T>,
): Promise<T> {
  const hold = await acquireRelease(ctx, services, asked);
  try {
    return await work(hold.release);
  } finally {
    if (ctx.body instanceof Stream) holdUntilClosed(ctx, hold.letGo);
    else hold.letGo();
  }
}

async function acquireRelease(ctx: RequestContext, services: ReleaseServices, asked: ReleaseAsked): Promise<ReleaseHandle> {
  const { releases } = services;
  const id = resolveRelease(releases, asked);
  try {
    if (releases.isLoaded(id)) return await releases.acquire(id);
    return await heavyWork(
      ctx,
      services,
      'release_load',
      (signal, terms) => {
        // The claim lasts to the request's deadline even once its answer is a 503
        // (RELEASE_LOAD_WAIT_MS), so that the load goes on that long for a retry to find.
        const ms = terms.deadlineMs ?? services.queryTimeoutMs;
        const deadline = new AbortController();
        setTimeout(() => deadline.abort(new DeadlineError(ms)), ms).unref();
        const claim = { signal: AbortSignal.any([signal, deadline.signal]), owner: terms.key, charged: terms.charge };
        return within(releases.acquire(id, claim), services.releaseLoadWaitMs);
      },
      { shared: true },
    );
  } catch (err) {
    // Withdrawn by a rollback since it was resolved.
    if (err instanceof NotPublishedError) throw notPublished(asked, err.release);
    if (err instanceof LoadFailedError) throw new ReleaseUnavailableError(err.release);
    if (err instanceof LoadRunningError) throw new ReleaseLoadRunningError(err.loading);
    if (err instanceof DOMException && err.name === 'TimeoutError') throw new ReleaseLoadingError(id);
    throw err;
  }
}

/** `handle`, or a TimeoutError after `ms`; a handle granted after that is let go at once. */
function within(handle: Promise<ReleaseHandle>, ms: number): Promise<ReleaseHandle> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new DOMException(`not loaded within ${ms} ms`, 'TimeoutError'));
      handle.then(
        (late) => late.letGo(),
        () => {},
      );
    }, ms);
    handle.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * The id of the release a request reads, found without loading or pinning anything:
 * `release=`, else the one its cursor was issued on, else the current one, which is
 * readable even while a rollback withdraws it (as Releases.acquire has it). Before the
 * first release is served, 503 not ready; a release that is not published is an
 * unknown release, or an invalid cursor when the cursor named it.
 */
function resolveRelease(releases: Pick<Releases, 'current' | 'isPublished'>, asked: ReleaseAsked): string {
  const current = releases.current();
  if (!current) throw new NotReadyError();
  const id = asked.release ?? asked.cursor?.release ?? current.id;
  if (id !== current.id && !releases.isPublished(id)) throw notPublished(asked, id);
  return id;
}

const notPublished = (asked: ReleaseAsked, id: string) =>
  asked.release === undefined ? new InvalidCursorError() : new UnknownReleaseError(id);

/**
 * The two releases /v1/revisions compares, and their Parquet files of `dataset`: the
 * diff reads those files, so neither release is loaded or pinned for it. `to` is by
 * default the current release, `from` the one published before `to`, or `to` itself
 * when there is none: nothing was revised, an empty diff (so a request sending
 * `metric` alone, as generated tests do, answers 200 on a server with one release).
 */
export function comparedReleases(
  releases: Pick<Releases, 'current' | 'isPublished' | 'previous' | 'fileOf'>,
  asked: { readonly from?: string; readonly to?: string },
  dataset: string,
): { from: string; to: string; files: { from: string; to: string } } {
  const to = resolveRelease(releases, { release: asked.to });
  const from = resolveRelease(releases, { release: asked.from ?? releases.previous(to) ?? to });
  const fileOf = (id: string) => {
    const file = releases.fileOf(id, dataset);
    if (file === undefined) throw new UnknownReleaseError(id);
    return file;
  };
  return { from, to, files: { from: fileOf(from), to: fileOf(to) } };
}
