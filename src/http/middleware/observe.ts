import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from '../../metrics.ts';
import type { RequestState } from '../request-state.ts';
import { renderError } from './errors.ts';
import { nameRequest } from './request-id.ts';
import { logRequest } from './request-log.ts';
import { requestCounter } from './request-metrics.ts';

/**
 * What every answer carries, whatever its route or status: a browser must neither
 * guess a JSON or CSV body's type (and run it as HTML) nor show an answer in a frame.
 * Pages that set a fuller Content-Security-Policy (/docs, the claim page) keep theirs.
 */
const NOSNIFF = 'nosniff';
const NO_FRAMES = "frame-ancestors 'none'";

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
        ctx.set('X-Content-Type-Options', NOSNIFF);
        if (!ctx.res.hasHeader('content-security-policy')) ctx.set('Content-Security-Policy', NO_FRAMES);
      }
      const ms = performance.now() - started;
      count(ctx, ms);
      logRequest(log, ctx, ms);
    }
  };
}
