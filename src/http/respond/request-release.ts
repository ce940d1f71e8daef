import {
  InvalidCursorError,
  NotReadyError,
  ReleaseLoadingError,
  ReleaseUnavailableError,
  UnknownReleaseError,
} from '../../errors/index.ts';
import type { Cursor } from '../../query/cursor.ts';
import { LoadFailedError, NotPublishedError } from '../../releases/errors.ts';
import type { ReleaseHandle } from '../../releases/releases.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { heavyWork } from './heavy-work.ts';

/** What a request asks to read: `release=`, else the release its cursor was issued on, else the current one. */
export interface ReleaseAsked {
  readonly release?: string;
  readonly cursor?: Cursor;
}

type ReleaseServices = Pick<Services, 'releases' | 'admission' | 'metrics' | 'releaseLoadWaitMs' | 'queryTimeoutMs' | 'clock' | 'limits'>;

/**
 * Pins the release a request reads (docs/api.md "Releases"), for the caller to let go
 * when it has answered. A published release that is not loaded is loaded in the
 * request's key's turn for heavy work, and the request waits for it at most
 * RELEASE_LOAD_WAIT_MS (503 release_loading after that; the load goes on). Before the
 * first release is served every request is 503 not ready; after, what the releases
 * refuse becomes the answer: an unknown release (an invalid cursor when the cursor
 * named it), or one that cannot be loaded.
 */
export async function acquireRelease(ctx: RequestContext, services: ReleaseServices, asked: ReleaseAsked): Promise<ReleaseHandle> {
  const { releases } = services;
  if (!releases.current()) throw new NotReadyError();
  const id = asked.release ?? asked.cursor?.release;
  try {
    if (id === undefined || releases.isLoaded(id) || !releases.isPublished(id)) return await releases.acquire(id);
    return await heavyWork(ctx, services, 'release_load', (signal) =>
      releases.acquire(id, AbortSignal.any([signal, AbortSignal.timeout(services.releaseLoadWaitMs)])),
    );
  } catch (err) {
    if (err instanceof NotPublishedError)
      throw asked.release === undefined ? new InvalidCursorError() : new UnknownReleaseError(err.release);
    if (err instanceof LoadFailedError) throw new ReleaseUnavailableError(err.release);
    if (err instanceof DOMException && err.name === 'TimeoutError') throw new ReleaseLoadingError(id!);
    throw err;
  }
}
