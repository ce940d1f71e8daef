import { createHash } from 'node:crypto';
import { InvalidParametersError, NotReadyError } from '../../errors/index.ts';
import { unknownKeys } from '../../query/options/params.ts';
import { DATASETS } from '../../registry.ts';
import { firstPublished, withdrawnReleases } from '../../releases/publication-log.ts';
import { type ReleaseCalendar, releaseCalendar } from '../../releases/release-calendar.ts';
import type { Releases } from '../../releases/releases.ts';
import { changeCounts, releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, ref } from '../openapi/responses.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import type { Route } from './route.ts';

// GET /v1/releases: the published releases, newest first, each described from its
// manifest and the publication log (docs/api.md "Releases"), and the releases a rollback
// withdrew: nothing is loaded or counted per request.

const UNKNOWN_PARAMETER = 'Unknown parameter: /v1/releases takes none';

function render(releases: Releases, current: string, calendar: ReleaseCalendar | undefined): { body: Buffer; key: string } {
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
  const body = Buffer.from(JSON.stringify({ releases: list, withdrawn, ...(calendar && { calendar }) }));
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
    const { calendar: settings } = services.notifications;
    // Read at every request: `late` turns true with time, not with a publication.
    const calendar = settings && releaseCalendar(services.releases.publications(), settings, services.clock());
    const of = `${current} ${services.releases.list().join()} ${services.releases.publications().length} ${JSON.stringify(calendar)}`;
    let last = rendered.get(services.releases);
    if (last?.of !== of) {
      last = { of, answer: render(services.releases, current, calendar) };
      rendered.set(services.releases, last);
    }
    const { body, key } = last.answer;
    await respondCacheable(ctx, services, { key, contentType: 'application/json; charset=utf-8', render: async () => ({ body }) });
    // An answer with a calendar changes with the clock, not only with the releases: never replayed without this handler.
    if (calendar) ctx.state.cacheable = undefined;
  },
  operation: {
    operationId: 'getReleases',
    tags: ['data'],
    summary: 'The published releases, newest first',
    'x-codeSamples': exampleRequest('/v1/releases'),
    description:
      "Each release a request may name with `release=`: when it was first published (the publication log's time), whether it is current, each dataset's row count and years, and, against the release that was current when it was published (`changes_against`), the rows added, removed and changed per dataset (computed once by `etl load`). `withdrawn` lists, newest first, the releases a rollback withdrew and no switch has served since, with when: no request may name them. With RELEASE_DAY set, `calendar` says when the next release is expected and whether it is late.",
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
        calendar: {
          type: 'object',
          description:
            "When a release is expected, after SDMX's release calendar; present only when the server sets RELEASE_DAY. A release published within `tolerance` before or after an expected day counts for that day.",
          additionalProperties: false,
          required: ['periodicity', 'next_expected', 'tolerance', 'late'],
          properties: {
            periodicity: { const: 'P1M', description: 'Monthly (ISO 8601 duration).' },
            next_expected: { type: 'string', format: 'date', description: 'The day (UTC) the next release is expected.' },
            tolerance: {
              type: 'string',
              pattern: '^P\\d+D$',
              description: 'How many days either side of it still count as on time (ISO 8601 duration), e.g. P7D.',
            },
            late: { type: 'boolean', description: 'True once `next_expected` plus the tolerance has passed without a release.' },
          },
        },
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
                additionalProperties: changeCounts,
              },
              changes_against: releaseId,
            },
          },
        },
      },
    },
  },
};
