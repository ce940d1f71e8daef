import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics.ts';
import { renderError } from './errors.ts';
import { nameRequest } from './request-id.ts';
import { logRequest } from './request-log.ts';
import { requestCounter } from './request-metrics.ts';

/**
 * The first step of every request on either listener, around all the others: the
 * request gets its id (X-Request-Id); whatever the steps after it throw becomes the
 * spec's JSON error; once answered, whatever the answer, it is counted and logged.
 * These share one span of the request, so they are one middleware.
 */
export function observeRequests(options: { metrics: Metrics; listener: 'public' | 'admin'; router: Router; log: Logger }): Middleware {
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
      const ms = performance.now() - started;
      count(ctx, ms);
      logRequest(log, ctx, ms);
    }
  };
}
