import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const MAX_URL = 512;

/** One JSON line per request, written when the response is done. */
export function logRequests(log: Logger): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      log.info({
        method: ctx.method,
        url: ctx.url.length > MAX_URL ? `${ctx.url.slice(0, MAX_URL)}…` : ctx.url,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        bytes: ctx.length,
        key: ctx.state.key?.id,
      }, 'request');
    }
  };
}
