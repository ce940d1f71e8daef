import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../../metrics.ts';

/**
 * Counts and times every request a listener answers, labelled by its route pattern,
 * the status and the error catalog's code (empty for a success).
 */
export function countRequests(metrics: Metrics, listener: 'public' | 'admin', router: Router): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeOf(ctx, router);
      metrics.requests.labels(listener, route, String(ctx.status), ctx.state.errorCode ?? '').inc();
      metrics.requestSeconds.labels(listener, route).observe((performance.now() - started) / 1000);
    }
  };
}

/**
 * The route pattern a request matched, for the request metrics' label (never the raw
 * path, whose variety would grow the label set without bound): the one its handler
 * named in `ctx.state.route`, else the one the router finds for its path (a request
 * refused before routing), else `unmatched`.
 */
function routeOf(ctx: Context, router: Router): string {
  if (typeof ctx.state.route === 'string') return ctx.state.route;
  const layer = router.match(ctx.path, ctx.method).pathAndMethod.find((l) => typeof l.path === 'string');
  return typeof layer?.path === 'string' ? layer.path : 'unmatched';
}
