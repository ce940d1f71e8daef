import type Router from '@koa/router';
import type { Services } from '../services.ts';

/** No key needed: load balancers and orchestrators poll it. 200 once data is loaded. */
export function register(router: Router, services: Services): void {
  router.get('/healthz', (ctx) => {
    const release = services.release.get();
    ctx.status = release ? 200 : 503;
    ctx.body = release ? { status: 'ok', release: release.id, retained: services.release.otherIds() } : { status: 'loading' };
  });
}
