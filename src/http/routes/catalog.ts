import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { InvalidParametersError } from '../../errors/index.ts';
import { DERIVED_KEYS } from '../../query/column-kinds.ts';
import { denominatorEntries } from '../../query/derived-plan.ts';
import { SERIES_KEYS } from '../../query/series-plan.ts';
import { DATASETS, DENOMINATORS, dimensionDef } from '../../registry.ts';
import type { LoadedRelease } from '../../releases/releases.ts';
import type { Services } from '../../services.ts';
import { releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { PREFER_WAIT, queryParameters } from '../openapi/parameters.ts';
import { headerRefs, keyedErrors, LIMIT_HEADERS, ref, releaseResponses } from '../openapi/responses.ts';
import { parseQuery, releaseParam } from '../params/params.ts';
import type { RequestContext } from '../request-state.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import { withRelease } from '../respond/request-release.ts';
import type { Route } from './route.ts';

// GET /v1/catalog. The catalog changes with the code and with the served release, so
// its body is rendered once per release, and its cache key (hence ETag) is the body's
// hash. It lists `year` among every financial dataset's dimensions (see docs/api.md).
// While the first release loads it lists the datasets without release metadata.
// `release=` describes a published release instead of the current one.

/** Other parameters are ignored, as they always were. */
export const schema = v.looseObject({ release: releaseParam });

interface Rendered {
  readonly body: Buffer;
  readonly key: string;
}

function render(release: LoadedRelease | undefined): Rendered {
  const datasets = DATASETS.map((def) => {
    const { name, description, dimensions, metrics } = def;
    const store = release?.datasets.get(name)?.store;
    const years = store?.dimensions.find((d) => d.name === 'year')?.dictionary.values;
    const per = def.kind === 'financial' ? denominatorEntries(def) : [];
    return {
      name,
      description,
      dimensions,
      metrics,
      ...(per.length > 0 && { per }),
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
  const body = Buffer.from(
    JSON.stringify({ ...meta, datasets, dimensions: DIMENSION_MEANINGS, derived: { ...DERIVED_KEYS, ...SERIES_KEYS } }),
  );
  return { body, key: `catalog ${createHash('sha256').update(body).digest('base64url')}` };
}

/** Every dimension's meaning, and the meaning of each value of a vocabulary (the registry's DIMENSIONS). */
const DIMENSION_MEANINGS = Object.fromEntries(
  [...new Set(DATASETS.flatMap((d) => d.dimensions))].map((name) => {
    const { meaning, values, open } = dimensionDef(name);
    return [name, { description: meaning, ...(values && { values, values_listed: open ? 'some' : 'all' }) }];
  }),
);

/** docs/api.md's table of dimensions and their values' meanings (test/docs.test.ts keeps it current). */
export function dimensionsTable(): string {
  const rows = Object.entries(DIMENSION_MEANINGS).map(([name, d]) => {
    const values = d.values ? Object.entries(d.values).map(([value, means]) => `\`${value}\`: ${means}`) : [];
    const listed = values.length ? `${values.join('; ')}${d.values_listed === 'some' ? '; and others' : ''}` : "the release's";
    return `| ${name} | ${d.description.replace(/\|/g, '\\|')} | ${listed} |`;
  });
  return ['| dimension | meaning | values |', '|---|---|---|', ...rows].join('\n');
}

const rendered = new WeakMap<LoadedRelease, Rendered>();
const loading = render(undefined);

async function respond(ctx: RequestContext, services: Services, release: LoadedRelease | undefined): Promise<void> {
  let catalog = release ? rendered.get(release) : loading;
  if (!catalog) {
    catalog = render(release);
    rendered.set(release!, catalog);
  }
  const { body, key } = catalog;
  await respondCacheable(ctx, services, {
    key,
    contentType: 'application/json; charset=utf-8',
    render: async () => ({ body }),
    release: release?.id,
  });
}

export const catalog: Route = {
  path: '/v1/catalog',
  async handle(ctx, services) {
    const { release } = parseQuery(schema, ctx.query);
    if (release === undefined && !services.releases.current()) return respond(ctx, services, undefined);
    await withRelease(ctx, services, { release }, (loaded) => respond(ctx, services, loaded));
  },
  operation: {
    operationId: 'getCatalog',
    tags: ['data'],
    summary: 'List every dataset',
    description:
      "Every dataset with its name, description, dimensions and metrics (spec 2.1), the denominators `per` on /v1/aggregate may divide its sums by, and, once a release is loaded, the release served (or the one `release` names) and each dataset's row count and first and last year. Other parameters are ignored.",
    parameters: [...queryParameters(schema), PREFER_WAIT],
    'x-codeSamples': exampleRequest('/v1/catalog'),
    responses: {
      200: {
        description: 'The catalog (JSON only; Accept is not negotiated here).',
        headers: headerRefs([...LIMIT_HEADERS, 'ETag']),
        content: { 'application/json': { schema: ref('CatalogResponse') } },
      },
      304: { description: 'If-None-Match holds the ETag.', headers: headerRefs(LIMIT_HEADERS) },
      ...keyedErrors({ badRelease: new InvalidParametersError({ release: ['Expected a release id like 2026-11'] }) }),
      ...releaseResponses(),
    },
  },
  schemas: {
    CatalogResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['datasets', 'dimensions', 'derived'],
      properties: {
        dimensions: {
          type: 'object',
          description:
            "Each dimension's meaning; for a vocabulary, each value's meaning too (`values_listed`: `all` for a closed vocabulary, `some` where other values occur, such as ISO currency codes).",
          additionalProperties: {
            type: 'object',
            additionalProperties: false,
            required: ['description'],
            properties: {
              description: { type: 'string' },
              values: { type: 'object', additionalProperties: { type: 'string' } },
              values_listed: { enum: ['all', 'some'] },
            },
          },
        },
        derived: {
          type: 'object',
          description:
            'What each derived key /v1/aggregate may add to a measure key holds, and its unit: every ratio (`_pct_change`, `_share`, `_per_<metric>`, `_cagr`) is a plain fraction; `_index` is 100 in the base year.',
          additionalProperties: { type: 'string' },
        },
        // Absent only while the first release loads.
        release: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'published_at', 'synthetic'],
          properties: { id: releaseId, published_at: { type: 'string', format: 'date-time' }, synthetic: { type: 'boolean' } },
        },
        datasets: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'description', 'dimensions', 'metrics'],
            properties: {
              name: { type: 'string' },
              description: { type: 'string' },
              dimensions: { type: 'array', items: { type: 'string' } },
              metrics: { type: 'array', items: { type: 'string' } },
              per: {
                type: 'array',
                description:
                  "The denominators `per=` on /v1/aggregate divides this dataset's sums by: the metric, the dataset holding it, the keys a row is matched on, the unit the numerator must be in, and what the ratio means.",
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['metric', 'dataset', 'keys', 'means'],
                  properties: {
                    metric: { enum: Object.keys(DENOMINATORS) },
                    dataset: { type: 'string' },
                    keys: { type: 'array', items: { type: 'string' } },
                    numerator_unit: { type: 'string' },
                    means: { type: 'string' },
                  },
                },
              },
              row_count: { type: 'integer', minimum: 0 },
              first_year: { type: 'integer' },
              last_year: { type: 'integer' },
            },
          },
        },
      },
    },
  },
};
