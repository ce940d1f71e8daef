import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { DATASETS } from '../registry.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';

// The catalog only changes with the code, so its body is rendered once, and its
// cache key (hence ETag) is the body's hash, taken once here. It lists `year` among
// every financial dataset's dimensions (see docs/api.md).
const body = Buffer.from(
  JSON.stringify({
    datasets: DATASETS.map(({ name, description, dimensions, metrics }) => ({ name, description, dimensions, metrics })),
  }),
);
const key = `catalog ${createHash('sha256').update(body).digest('base64url')}`;

export function register(router: Router, services: Services): void {
  router.get('/v1/catalog', async (ctx) => {
    await respondCacheable(ctx, services, key, 'application/json; charset=utf-8', async () => ({ body }));
  });
}
