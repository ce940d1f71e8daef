import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ApiError, InternalError } from '../errors.ts';

/**
 * Renders every error as the spec's JSON body. Errors from the catalog carry their
 * own status and text; anything else is a bug: logged in full, answered with a
 * generic 500 that leaks nothing.
 */
export function renderErrors(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const known = err instanceof ApiError ? err : new InternalError();
      if (!(err instanceof ApiError)) log.error({ err, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = known.status;
      // Headers set before the throw stay: the rate-limit headers belong on a 400,
      // 404 or 429 that was counted, as on a 200.
      ctx.set(known.headers);
      ctx.body = known.body;
    }
  };
}
