import { Stream } from 'node:stream';
import { DeadlineError } from '../../admission/queue.ts';
import type { Clock } from '../../clock.ts';
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
 * it at most RELEASE_LOAD_WAIT_MS (503 release_loading after that, its claim kept for
 * its retry: ClaimEnd). The load's running time is charged to the keys that claimed it, and
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
        const end = new ClaimEnd(signal, terms.deadlineMs ?? services.queryTimeoutMs, services.clock);
        const claim = { signal: end.signal, owner: terms.key, charged: terms.charge };
        return within(releases.acquire(id, claim), services.releaseLoadWaitMs, () =>
          end.atLeast(2 * ReleaseLoadingError.retryAfterSeconds * 1000),
        );
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

/**
 * When a request's claim on a release load ends: at its deadline (`ms` from its turn,
 * its `Prefer: wait` or QUERY_TIMEOUT_MS), or sooner when `request` aborts (its client
 * gone, its deadline passed while it waits). A request answered 503 release_loading
 * first keeps its claim to its deadline and at least twice the Retry-After it was
 * given: the load goes on for the retry the 503 asks for, which joins it, so a release
 * slower to load than either limit is still loaded for a client that keeps asking.
 */
class ClaimEnd {
  private readonly ended = new AbortController();
  private endsAt: number;
  private timer: NodeJS.Timeout;
  readonly signal: AbortSignal;

  constructor(
    request: AbortSignal,
    private readonly deadlineMs: number,
    private readonly clock: Clock,
  ) {
    this.signal = AbortSignal.any([request, this.ended.signal]);
    this.endsAt = clock() + deadlineMs;
    this.timer = this.schedule();
  }

  /** The claim lasts at least `ms` from now. */
  atLeast(ms: number): void {
    if (this.clock() + ms <= this.endsAt) return;
    this.endsAt = this.clock() + ms;
    clearTimeout(this.timer);
    this.timer = this.schedule();
  }

  private schedule(): NodeJS.Timeout {
    return setTimeout(() => this.ended.abort(new DeadlineError(this.deadlineMs)), this.endsAt - this.clock()).unref();
  }
}

/** `handle`, or a TimeoutError after `ms` (then `late()`); a handle granted after that is let go at once. */
function within(handle: Promise<ReleaseHandle>, ms: number, late: () => void): Promise<ReleaseHandle> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      late();
      reject(new DOMException(`not loaded within ${ms} ms`, 'TimeoutError'));
      handle.then(
        (granted) => granted.letGo(),
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
