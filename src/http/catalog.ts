import type Router from '@koa/router';
import { DATASETS } from '../data/registry.ts';

// The catalog only changes with the code, so its body is rendered once. It lists
// `year` among every financial dataset's dimensions (see docs/api.md).
const body = JSON.stringify({
  datasets: DATASETS.map(({ name, description, dimensions, metrics }) => ({ name, description, dimensions, metrics })),
});

export function register(router: Router): void {
  router.get('/v1/catalog', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = body;
  });
}
