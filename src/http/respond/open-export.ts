import { ExportsOpenError } from '../../errors/index.ts';
import type { Services } from '../../services.ts';
import type { RequestContext } from '../request-state.ts';
import { requestKey } from './request-key.ts';
import { onResponseClosed } from './response-closed.ts';

/** Retry-After of a refusal for exports open: when one of them may have ended, for a client that retries on its own. */
const OPEN_RETRY_SECONDS = 10;

/**
 * Counts an export of the request's key as open until its response closes, refusing
 * one past EXPORTS_OPEN_PER_KEY (429 exports_open), and ends it when the client has
 * taken no bytes for EXPORT_IDLE_SECONDS: the socket's bytes written stop moving once
 * the client stops reading and the buffers between are full. Ending it lets go of the
 * release it reads. Call before the body is set.
 */
export function openExport(ctx: RequestContext, services: Pick<Services, 'exports' | 'metrics' | 'clock'>): void {
  const { open, idleMs } = services.exports;
  const close = open.begin(requestKey(ctx).id);
  if (!close) {
    services.metrics.heavyRefusals.inc({ reason: 'exports_open' });
    throw new ExportsOpenError(open.perKey, OPEN_RETRY_SECONDS);
  }
  const res = ctx.res;
  // Idle is counted from the answer's first byte: computing before it (a whole history or
  // diff can take longer than EXPORT_IDLE_SECONDS) is the deadline's to bound, not this.
  let written = res.socket?.bytesWritten ?? 0;
  let since: number | undefined;
  const watch = setInterval(
    () => {
      const now = services.clock();
      const bytes = res.socket?.bytesWritten ?? written;
      if (bytes !== written) {
        written = bytes;
        since = now;
      } else if (since !== undefined && now - since >= idleMs) {
        services.metrics.heavyRefusals.inc({ reason: 'export_idle' });
        res.destroy();
      }
    },
    Math.max(50, Math.min(idleMs / 4, 5_000)),
  );
  watch.unref();
  onResponseClosed(ctx, () => {
    clearInterval(watch);
    close();
  });
}
