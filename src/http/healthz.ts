import type Router from '@koa/router';
import type { Services } from '../services.ts';

/** No key needed: load balancers and orchestrators poll it. 200 once data is loaded. */
export function register(router: Router, services: Services): void {
  router.get('/healthz', (ctx) => {
    const ready = services.release.ready;
    ctx.status = ready ? 200 : 503;
    ctx.body = ready ? { status: 'ok', release: services.release.get().id } : { status: 'loading' };
  });
}
