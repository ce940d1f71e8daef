import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics.ts';
import { refusalInstead } from '../connection-refusal.ts';
import { EVERY_ANSWER } from '../every-answer.ts';
import type { RequestContext, RequestState } from '../request-state.ts';
import { renderError } from './errors.ts';
import { nameRequest } from './request-id.ts';
import { logRequest } from './request-log.ts';
import { requestCounter } from './request-metrics.ts';

/**
 * The first step of every request on either listener, around all the others: the
 * request gets its id (X-Request-Id); whatever the steps after it throw becomes the
 * spec's JSON error; once answered, whatever the answer, it carries the headers every
 * answer does, and is counted and logged. These share one span of the request, so
 * they are one middleware.
 */
export function observeRequests(options: {
  metrics: Metrics;
  listener: 'public' | 'admin';
  router: Router<RequestState>;
  log: Logger;
  /** Told of each answered request after it is counted and logged (its key's usage). */
  record?: (ctx: RequestContext) => void;
}): Middleware<RequestState> {
  const { log } = options;
  const count = requestCounter(options.metrics, options.listener, options.router);
  return async (ctx, next) => {
    const started = performance.now();
    nameRequest(ctx);
    try {
      await next();
    } catch (err) {
      renderError(ctx, err, log);
    } finally {
      // Set after the error renderer, which drops what the handler had set.
      if (!ctx.headerSent) {
        ctx.set('X-Content-Type-Options', EVERY_ANSWER['X-Content-Type-Options']);
        if (!ctx.res.hasHeader('content-security-policy')) ctx.set('Content-Security-Policy', EVERY_ANSWER['Content-Security-Policy']);
      }
      // The connection refused the request in its handler's place (a malformed body): that is its answer.
      const refusal = refusalInstead(ctx.res);
      if (refusal) ctx.state.errorCode = refusal.code;
      const ms = performance.now() - started;
      count(ctx, ms);
      logRequest(log, ctx, ms);
      options.record?.(ctx);
    }
  };
}
