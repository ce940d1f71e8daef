import { createHash } from 'node:crypto';
import { InvalidParametersError, NotReadyError } from '../../errors/index.ts';
import { unknownKeys } from '../../query/options/params.ts';
import { DATASETS } from '../../registry.ts';
import { firstPublished, withdrawnReleases } from '../../releases/publication-log.ts';
import type { Releases } from '../../releases/releases.ts';
import { releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, ref } from '../openapi/responses.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import type { Route } from './route.ts';

// GET /v1/releases: the published releases, newest first, each described from its
// manifest and the publication log (docs/api.md "Releases"), and the releases a rollback
// withdrew: nothing is loaded or counted per request.

const UNKNOWN_PARAMETER = 'Unknown parameter: /v1/releases takes none';

function render(releases: Releases, current: string): { body: Buffer; key: string } {
  const log = releases.publications();
  const published = firstPublished(log);
  const list = releases.list().map((id) => {
    const manifest = releases.manifest(id)!;
    const datasets = Object.fromEntries(
      DATASETS.flatMap(({ name }) => {
        const entry = manifest.datasets[name];
        return entry
          ? [
              [
                name,
                {
                  row_count: entry.rows,
                  ...(entry.first_year !== undefined && { first_year: entry.first_year, last_year: entry.last_year }),
                },
              ],
            ]
          : [];
      }),
    );
    return {
      id,
      published_at: published.get(id) ?? manifest.published_at ?? manifest.created_at,
      current: id === current,
      synthetic: manifest.synthetic ?? false,
      datasets,
      ...(manifest.changes && { changes: manifest.changes.datasets, changes_against: manifest.changes.against }),
    };
  });
  const withdrawn = [...withdrawnReleases(log)]
    .sort(([a], [b]) => (a < b ? 1 : -1))
    .map(([id, at]) => ({ id, published_at: published.get(id)!, withdrawn_at: at }));
  const body = Buffer.from(JSON.stringify({ releases: list, withdrawn }));
  return { body, key: `releases ${createHash('sha256').update(body).digest('base64url')}` };
}

// Per service, rendered again only when the list or the current release changed.
const rendered = new WeakMap<Releases, { of: string; answer: { body: Buffer; key: string } }>();

export const releases: Route = {
  path: '/v1/releases',
  async handle(ctx, services) {
    const unknown = unknownKeys(ctx.query, () => false);
    if (unknown.length) throw new InvalidParametersError(Object.fromEntries(unknown.map((key) => [key, [UNKNOWN_PARAMETER]])));
    const current = services.releases.current()?.id;
    if (!current) throw new NotReadyError();
    const of = `${current} ${services.releases.list().join()} ${services.releases.publications().length}`;
    let last = rendered.get(services.releases);
    if (last?.of !== of) {
      last = { of, answer: render(services.releases, current) };
      rendered.set(services.releases, last);
    }
    const { body, key } = last.answer;
    await respondCacheable(ctx, services, { key, contentType: 'application/json; charset=utf-8', render: async () => ({ body }) });
  },
  operation: {
    operationId: 'getReleases',
    tags: ['data'],
    summary: 'The published releases, newest first',
    'x-codeSamples': exampleRequest('/v1/releases'),
    description:
      "Each release a request may name with `release=`: when it was first published (the publication log's time), whether it is current, each dataset's row count and years, and, against the release that was current when it was published (`changes_against`), the rows added, removed and changed per dataset (computed once by `etl load`). `withdrawn` lists, newest first, the releases a rollback withdrew and no switch has served since, with when: no request may name them.",
    responses: {
      200: {
        description: 'The releases (JSON only).',
        headers: headerRefs([...LIMIT_HEADERS, 'ETag', 'Cache-Control']),
        content: { 'application/json': { schema: ref('ReleasesResponse') } },
      },
      304: { description: 'If-None-Match holds the ETag.', headers: headerRefs(LIMIT_HEADERS) },
      ...keyedErrors({ unknownParameter: new InvalidParametersError({ limit: [UNKNOWN_PARAMETER] }) }),
    },
  },
  schemas: {
    ReleasesResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['releases', 'withdrawn'],
      properties: {
        withdrawn: {
          type: 'array',
          description: 'Releases `etl rollback` withdrew and no switch has served since, newest first.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'published_at', 'withdrawn_at'],
            properties: {
              id: releaseId,
              published_at: { type: 'string', format: 'date-time', description: 'When it was first published.' },
              withdrawn_at: { type: 'string', format: 'date-time' },
            },
          },
        },
        releases: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'published_at', 'current', 'synthetic', 'datasets'],
            properties: {
              id: releaseId,
              published_at: { type: 'string', format: 'date-time' },
              current: { type: 'boolean' },
              synthetic: { type: 'boolean' },
              datasets: {
                type: 'object',
                additionalProperties: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['row_count'],
                  properties: {
                    row_count: { type: 'integer', minimum: 0 },
                    first_year: { type: 'integer' },
                    last_year: { type: 'integer' },
                  },
                },
              },
              changes: {
                type: 'object',
                description:
                  'Rows added, removed and changed per dataset against `changes_against`; absent for the first release and for generated ones.',
                additionalProperties: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['added', 'removed', 'changed'],
                  properties: {
                    added: { type: 'integer', minimum: 0 },
                    removed: { type: 'integer', minimum: 0 },
                    changed: { type: 'integer', minimum: 0 },
                  },
                },
              },
              changes_against: releaseId,
            },
          },
        },
      },
    },
  },
};
