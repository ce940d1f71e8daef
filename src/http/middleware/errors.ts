import type { Logger } from 'pino';
import { ApiError, InternalError } from '../../errors/index.ts';
import type { RequestContext } from '../request-state.ts';
import { loggableUrl } from './request-log.ts';

const KEPT_ON_ERROR = /^(?:x-ratelimit-|ratelimit|retry-after$|x-request-id$|preference-applied$|x-heavy-remaining$)/i;

/**
 * Renders an error as the spec's JSON body. Errors from the catalog carry their own
 * status and text; anything else is a bug: logged in full, answered with a generic
 * 500 that leaks nothing.
 */
export function renderError(ctx: RequestContext, err: unknown, log: Logger): void {
  const known = err instanceof ApiError ? err : new InternalError();
  if (!(err instanceof ApiError))
    log.error({ err, reqId: ctx.state.requestId, method: ctx.method, path: loggableUrl(ctx.path) }, 'unhandled error');
  ctx.state.errorCode = known.code;
  ctx.status = known.status;
  // Like koa's own error handler, drop what the failed handler had set (ETag,
  // Cache-Control, Vary, Content-Encoding…), but keep the rate-limit headers set
  // before it ran: a client needs them most on an error, as it needs the heavy budget
  // left, and Preference-Applied, which says what deadline a 504 had. Errors are never cached.
  for (const name of Object.keys(ctx.response.headers)) {
    if (!KEPT_ON_ERROR.test(name)) ctx.remove(name);
  }
  ctx.set('Cache-Control', 'no-store');
  ctx.set(known.headers);
  ctx.body = known.body;
}
