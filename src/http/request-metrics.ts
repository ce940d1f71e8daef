import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../metrics.ts';

/**
 * Counts every answered request and times it, labelled by the route pattern (never
 * the raw path, whose variety would grow the label set without bound) and by the
 * error code that renderErrors left in `ctx.state.errorCode`. A request refused
 * before routing (key check, limiter, query guard) is labelled with the route it
 * asked for, looked up in `router`; `unmatched` when there is none.
 */
export function countRequests(metrics: Metrics, listener: 'public' | 'admin', router: Router): Middleware {
  return async (ctx, next) => {
    const stop = metrics.requestSeconds.startTimer();
    try {
      await next();
    } finally {
      const route = routeOf(ctx, router);
      stop({ listener, route });
      metrics.requests.inc({ listener, route, status: ctx.status, code: ctx.state.errorCode ?? '' });
    }
  };
}

function routeOf(ctx: Context, router: Router): string {
  if (typeof ctx._matchedRoute === 'string') return ctx._matchedRoute;
  const layer = router.match(ctx.path, ctx.method).pathAndMethod.find((l) => typeof l.path === 'string');
  return typeof layer?.path === 'string' ? layer.path : 'unmatched';
}
