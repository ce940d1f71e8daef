import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Metrics } from '../../metrics.ts';

type Listener = 'public' | 'admin';

/**
 * Counts one answered request and its duration, labelled by its route pattern, the
 * status and the error catalog's code (empty for a success). The labelled children
 * are made once per label set.
 */
export function requestCounter(
  metrics: Metrics,
  listener: Listener,
): (route: string, status: number, code: string, seconds: number) => void {
  const counts = new Map<string, { inc(): void }>();
  const durations = new Map<string, { observe(value: number): void }>();
  return (route, status, code, seconds) => {
    const key = `${route} ${status} ${code}`;
    let count = counts.get(key);
    if (!count) {
      count = metrics.requests.labels(listener, route, String(status), code);
      counts.set(key, count);
    }
    let duration = durations.get(route);
    if (!duration) {
      duration = metrics.requestSeconds.labels(listener, route);
      durations.set(route, duration);
    }
    count.inc();
    duration.observe(seconds);
  };
}

/** Counts and times every request a listener answers (the admin listener's; the public one's pipeline counts its own). */
export function countRequests(metrics: Metrics, listener: Listener, router: Router): Middleware {
  const count = requestCounter(metrics, listener);
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      count(routeOf(ctx, router), ctx.status, ctx.state.errorCode ?? '', (performance.now() - started) / 1000);
    }
  };
}

/**
 * The route pattern a request matched, for the request metrics' label (never the raw
 * path, whose variety would grow the label set without bound); a request refused
 * before routing is labelled with the route it asked for, `unmatched` when none.
 */
export function routeOf(ctx: Context, router: Router): string {
  if (typeof ctx._matchedRoute === 'string') return ctx._matchedRoute;
  const layer = router.match(ctx.path, ctx.method).pathAndMethod.find((l) => typeof l.path === 'string');
  return typeof layer?.path === 'string' ? layer.path : 'unmatched';
}
