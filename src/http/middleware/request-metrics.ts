import type Router from '@koa/router';
import type { Metrics } from '../../metrics.ts';
import type { RequestContext, RequestState } from '../request-state.ts';

/**
 * Counts and times the requests a listener answers, labelled by route pattern, status
 * and the error catalog's code (empty for a success). Each label set's counter and
 * histogram are looked up once: prom-client's labels() makes and checks a label object
 * at every call.
 */
export function requestCounter(
  metrics: Metrics,
  listener: 'public' | 'admin',
  router: Router<RequestState>,
): (ctx: RequestContext, ms: number) => void {
  const counts = new Map<string, { inc(): void }>();
  const durations = new Map<string, { observe(seconds: number): void }>();
  return (ctx, ms) => {
    const route = routeOf(ctx, router);
    const status = String(ctx.status);
    const code = ctx.state.errorCode ?? '';
    const key = `${route} ${status} ${code}`;
    let count = counts.get(key);
    if (!count) {
      count = metrics.requests.labels(listener, route, status, code);
      counts.set(key, count);
    }
    let duration = durations.get(route);
    if (!duration) {
      duration = metrics.requestSeconds.labels(listener, route);
      durations.set(route, duration);
    }
    count.inc();
    duration.observe(ms / 1000);
  };
}

/**
 * The route pattern a request matched, for the request metrics' label (never the raw
 * path, whose variety would grow the label set without bound): the one its handler
 * named in `ctx.state.route` (an API route, a replayed answer), else the one the
 * router matches for its path and method (the claim and Explore pages, the admin
 * routes, a request refused before routing), else `unmatched`.
 */
export function routeOf(ctx: RequestContext, router: Router<RequestState>): string {
  if (ctx.state.route !== undefined) return ctx.state.route;
  const layer = router.match(ctx.path, ctx.method).pathAndMethod.find((l) => typeof l.path === 'string');
  return typeof layer?.path === 'string' ? layer.path : 'unmatched';
}
