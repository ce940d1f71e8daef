import type Router from '@koa/router';
import type { UsageLog } from '../../usage/usage-log.ts';
import type { RequestContext, RequestState } from '../request-state.ts';
import { onResponseClosed } from '../respond/response-closed.ts';
import { routeOf } from './request-metrics.ts';

/** The limit behind each refusal of the error catalog a key's request can get, by code (docs/api.md "Usage"). */
const REFUSED_BY: Readonly<Record<string, string>> = {
  export_limited: 'exports_day',
  exports_open: 'exports_open',
  heavy_budget: 'heavy_seconds_minute',
  release_load_running: 'release_load',
  busy: 'busy',
  timeout: 'timeout',
  too_many_groups: 'aggregate_groups',
};

/**
 * Counts each answered request made with a valid key in its key's usage, once its
 * response has closed (the bytes it wrote are known then): in memory, written out by
 * the UsageLog's flush, so it never delays or fails the request. A refusal also
 * becomes the key's `last_refused`. The usage endpoints are the meter, not what it
 * meters: they are not counted.
 */
export function usageRecorder(log: UsageLog, router: Router<RequestState>): (ctx: RequestContext) => void {
  return (ctx) => {
    const key = ctx.state.key;
    if (key === undefined) return;
    const endpoint = routeOf(ctx, router);
    if (endpoint.startsWith('/v1/usage')) return;
    const code = ctx.state.errorCode;
    const refused = code === undefined ? undefined : code === 'rate_limited' ? ctx.state.refusedWindow : REFUSED_BY[code];
    if (refused !== undefined) {
      const retryAfter = Number(ctx.response.get('retry-after'));
      log.refusal(key.id, {
        at: new Date().toISOString(),
        limit: refused,
        path: ctx.path,
        request_id: ctx.state.requestId,
        retry_after: retryAfter > 0 ? retryAfter : null,
      });
    }
    // Status line, headers and body as written: the socket's count from before this answer to its end (one answer at a time per connection).
    const socket = ctx.res.socket;
    const before = socket?.bytesWritten ?? 0;
    onResponseClosed(ctx, () =>
      log.answered(key.id, {
        status: ctx.res.statusCode,
        endpoint,
        bytes: Math.max(0, (socket?.bytesWritten ?? before) - before),
        refused,
      }),
    );
  };
}
