import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import { InvalidParametersError, NotReadyError } from '../errors.ts';
import { DATASETS } from '../registry.ts';
import type { Services } from '../services.ts';
import { respondCacheable } from './cacheable.ts';
import { unknownKeys } from './params.ts';

// GET /v1/releases: the published releases, newest first, each described from its
// manifest (docs/api.md "Releases"): nothing is loaded or counted per request.

interface Rendered {
  readonly body: Buffer;
  readonly key: string;
}

function render(services: Services, current: string): Rendered {
  const releases = services.published.list().map((id) => {
    const { manifest } = services.published.get(id)!;
    const datasets = Object.fromEntries(
      DATASETS.flatMap(({ name }) => {
        const entry = manifest.datasets[name];
        return entry ? [[name, { row_count: entry.rows, ...(entry.first_year !== undefined && { first_year: entry.first_year, last_year: entry.last_year }) }]] : [];
      }),
    );
    return {
      id,
      published_at: manifest.published_at ?? manifest.created_at,
      current: id === current,
      synthetic: manifest.synthetic ?? false,
      datasets,
      ...(manifest.changes && { changes: manifest.changes.datasets, changes_against: manifest.changes.against }),
    };
  });
  const body = Buffer.from(JSON.stringify({ releases }));
  return { body, key: `releases ${createHash('sha256').update(body).digest('base64url')}` };
}

export function register(router: Router, services: Services): void {
  let rendered: { of: string; answer: Rendered } | undefined;
  router.get('/v1/releases', (ctx) => {
    const unknown = unknownKeys(ctx.query, () => false);
    if (unknown.length) throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, ['Unknown parameter: /v1/releases takes none']])));
    const current = services.release.get()?.id;
    if (!current) throw new NotReadyError();
    // Rendered again only when the list or the current release changed.
    const of = `${current} ${services.published.list().join()}`;
    if (rendered?.of !== of) rendered = { of, answer: render(services, current) };
    const { body, key } = rendered.answer;
    return respondCacheable(ctx, services, { key, contentType: 'application/json; charset=utf-8', render: async () => ({ body }) });
  });
}
