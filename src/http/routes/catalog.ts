import { createHash } from 'node:crypto';
import { DERIVED_KEYS } from '../../query/column-kinds.ts';
import { PLANNED } from '../../query/options/aggregate.ts';
import { denominatorEntry, denominatorsOf } from '../../query/options/derived.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { CATALOG } from '../../query/options/endpoints.ts';
import { DATASETS, dimensionDef, metricDef } from '../../registry.ts';
import type { LoadedRelease } from '../../releases/releases.ts';
import type { Services } from '../../services.ts';
import { CATALOG_SCHEMAS, catalogOperation } from '../openapi/operations/catalog.ts';
import type { RequestContext } from '../request-state.ts';
import { type AsOfMeta, releaseNamed } from '../respond/as-of.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import { withRelease } from '../respond/request-release.ts';
import type { Route } from './route.ts';

// GET /v1/catalog. The catalog changes with the code and with the served release, so
// its body is rendered once per release, and its cache key (hence ETag) is the body's
// hash. It lists `year` among every financial dataset's dimensions (see docs/api.md).
// While the first release loads it lists the datasets without release metadata.
// `release=` describes a published release instead of the current one.

interface Rendered {
  readonly body: Buffer;
  readonly key: string;
}

function render(release: LoadedRelease | undefined, asOf?: AsOfMeta): Rendered {
  const datasets = DATASETS.map((def) => {
    const { name, description, dimensions, metrics } = def;
    const store = release?.datasets.get(name)?.store;
    const years = store?.dimensions.find((d) => d.name === 'year')?.dictionary.values;
    const per = def.kind === 'financial' ? denominatorsOf(def).map((metric) => denominatorEntry(def, metric)) : [];
    const unitsFrom = Object.fromEntries(
      def.metrics.flatMap((m) => (metricDef(m).unitFrom ? [[m, metricDef(m).unitFrom!.dimension]] : [])),
    );
    return {
      name,
      description,
      dimensions,
      metrics,
      ...(per.length > 0 && { per }),
      ...(Object.keys(unitsFrom).length > 0 && { units_from: unitsFrom }),
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
    JSON.stringify({ ...meta, ...(asOf && { as_of: asOf }), datasets, dimensions: DIMENSION_MEANINGS, derived: DERIVED }),
  );
  return { body, key: `catalog ${createHash('sha256').update(body).digest('base64url')}` };
}

/** What each key an aggregate's options add holds: the column kinds', then any other an option adds (a wide answer's). */
const DERIVED = Object.assign({}, DERIVED_KEYS, ...Object.values(PLANNED).map((option) => option.keys ?? {}));

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

async function respond(ctx: RequestContext, services: Services, release: LoadedRelease | undefined, asOf?: AsOfMeta): Promise<void> {
  let catalog = asOf ? render(release, asOf) : release ? rendered.get(release) : loading;
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
  path: CATALOG.path,
  endpoint: CATALOG,
  async handle(ctx, services) {
    const { release, asOf } = releaseNamed(ctx, services.releases, parseOptions(CATALOG, ctx.query));
    if (release === undefined && !services.releases.current()) return respond(ctx, services, undefined);
    await withRelease(ctx, services, { release }, (loaded) => respond(ctx, services, loaded, asOf));
  },
  operation: catalogOperation(CATALOG),
  schemas: CATALOG_SCHEMAS,
};
