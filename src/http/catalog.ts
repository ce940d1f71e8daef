import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import * as v from 'valibot';
import { DATASETS } from '../registry.ts';
import type { Services } from '../services.ts';
import type { LoadedRelease } from '../store/loader.ts';
import { respondCacheable } from './cacheable.ts';
import { holdRelease } from './paging.ts';
import { parseQuery, releaseParam } from './params.ts';

// The catalog changes with the code and with the served release, so its body is
// rendered once per release, and its cache key (hence ETag) is the body's hash. It
// lists `year` among every financial dataset's dimensions (see docs/api.md). While
// the first release loads it lists the datasets without release metadata.
// `release=` describes a published release instead of the current one.

/** Other parameters are ignored, as they always were. */
export const schema = v.looseObject({ release: releaseParam });

interface Rendered {
  readonly body: Buffer;
  readonly key: string;
}

function render(release: LoadedRelease | undefined): Rendered {
  const datasets = DATASETS.map(({ name, description, dimensions, metrics }) => {
    const store = release?.datasets.get(name)?.store;
    const years = store?.dimensions.find((d) => d.name === 'year')?.dictionary.values;
    return {
      name, description, dimensions, metrics,
      ...(store && { row_count: store.rowCount }),
      ...(years && { first_year: years[0], last_year: years.at(-1) }),
    };
  });
  const meta = release && {
    release: {
      id: release.id,
      published_at: release.manifest.published_at ?? release.manifest.created_at,
      synthetic: release.manifest.synthetic ?? false,
    },
  };
  const body = Buffer.from(JSON.stringify({ ...meta, datasets }));
  return { body, key: `catalog ${createHash('sha256').update(body).digest('base64url')}` };
}

export function register(router: Router, services: Services): void {
  const rendered = new WeakMap<LoadedRelease, Rendered>();
  const loading = render(undefined);
  const respond = (ctx: Parameters<Parameters<Router['get']>[1]>[0], release: LoadedRelease | undefined) => {
    let catalog = release ? rendered.get(release) : loading;
    if (!catalog) rendered.set(release!, (catalog = render(release)));
    const { body, key } = catalog;
    return respondCacheable(ctx, services, { key, contentType: 'application/json; charset=utf-8', render: async () => ({ body }), release: release?.id });
  };
  router.get('/v1/catalog', async (ctx) => {
    const { release } = parseQuery(schema, ctx.query);
    if (release === undefined && !services.release.get()) return respond(ctx, undefined);
    const hold = await holdRelease(services, { release });
    try {
      await respond(ctx, hold.release);
    } finally {
      hold.letGo();
    }
  });
}
