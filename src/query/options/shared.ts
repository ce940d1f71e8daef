import * as v from 'valibot';
import { InvalidCursorError, InvalidParametersError, NoReleaseAsOfError } from '../../errors/index.ts';
import type { FormatName } from '../../render/formats.ts';
import { datasetParam, type MetricUse, namesOf, unknownDataset, unknownMetric } from './datasets.ts';
import type { OptionExample, QueryOption } from './option.ts';
import {
  AS_OF_EXPECTED,
  type AsOf,
  asOfParam,
  cursorParam,
  formatParam,
  invalidParameters,
  limitParam,
  periodParam,
  releaseParam,
} from './params.ts';

// The options several data endpoints share: the dataset named, the years, the page's
// size, position and format, and the release read. Each is a part of the scope its
// endpoint's keys are built on (query/scope.ts), resolved by the request first.

/** The 400 of a request without the dataset parameter, as its schema words it. */
function missing(name: 'metric' | 'dataset', schema: v.GenericSchema): InvalidParametersError {
  const parsed = v.safeParse(v.object({ [name]: schema }), {});
  return invalidParameters(parsed.success ? [] : parsed.issues);
}

/**
 * `metric`: the financial dataset, given once. `use` says how the endpoint uses its
 * metrics (an aggregate names one again as its measure, which its hint says);
 * `examples` are datasets that answer on the endpoint as they are, the first one alone.
 */
export function metricOption(examples: readonly OptionExample[], use: MetricUse = 'rows', note = '') {
  const schema = datasetParam('metric', 'financial');
  return {
    schema,
    description: `Financial dataset: ${namesOf('financial').join(', ')} (GET /v1/catalog lists them). Given once.${note && ` ${note}`}`,
    examples,
    errors: {
      missingMetric: missing('metric', schema),
      unknownMetric: unknownMetric('revenue', use),
      metricOfADataset: unknownMetric('inflation', use),
    },
    key: 'scope',
    values: () => namesOf('financial'),
    explore: 'first',
  } satisfies QueryOption<string>;
}

const datasetSchema = datasetParam('dataset', 'reference');

/** `dataset`: the reference dataset of /v1/reference. */
export const dataset = {
  schema: datasetSchema,
  description: `Reference dataset: ${namesOf('reference').join(', ')}. Given once.`,
  examples: namesOf('reference').map((value) => ({ value })),
  errors: {
    missingDataset: missing('dataset', datasetSchema),
    unknownDataset: unknownDataset('countries'),
    financialDataset: unknownDataset('ggr'),
  },
  key: 'scope',
  values: () => namesOf('reference'),
  explore: 'first',
} satisfies QueryOption<string>;

export const period = {
  schema: periodParam,
  description: 'Keeps rows whose calendar year overlaps `YYYY-MM-DD:YYYY-MM-DD` (rows are annual). Given once.',
  examples: [{ value: '2020-01-01:2024-12-31' }, { value: '2010-01-01:2014-12-31' }],
  errors: { badPeriod: new InvalidParametersError({ period: ['Expected format: YYYY-MM-DD:YYYY-MM-DD'] }) },
  key: 'scope',
  explore: 'first',
} satisfies QueryOption<v.InferOutput<typeof periodParam>>;

/** `limit`: rows (or groups) per page, `fallback` when absent; its examples page `request` (by default the endpoint's example request). */
export const limitOption = (fallback: number, description = 'Rows per page. Given once.', request?: string) =>
  ({
    schema: limitParam(fallback),
    description,
    examples: [
      { value: '5', request },
      { value: '100', request },
    ],
    key: 'scope',
    integer: true,
  }) satisfies QueryOption<number>;

export const cursor = {
  schema: cursorParam,
  description:
    'Opaque cursor of the next page: `pagination.cursor` of the previous JSON page, or its `X-Next-Cursor` header. Keep the other parameters the same; a refused cursor (400 `Invalid pagination cursor`) means: repeat the request without it.',
  // The shape of one: a real one comes from the page before.
  examples: [{ value: '2n9c.64_LsnkjhRyQoPrnqKXl2A.4cc3.json' }],
  errors: { invalidCursor: new InvalidCursorError() },
  key: 'scope',
  explore: 'page',
} satisfies QueryOption<string | undefined>;

/** `format`: one of the formats the endpoint serves, `examples` among them. */
export const formatOption = <const N extends FormatName>(offered: readonly N[], examples: readonly N[]) =>
  ({
    schema: formatParam(offered),
    description:
      "The body's format, by name: it wins over `Accept`, so a URL alone (pandas, R, Excel, a browser) picks it. A cursor pages only the format it was issued in. Given once.",
    examples: examples.map((value) => ({ value })),
    key: 'scope',
    explore: 'page',
  }) satisfies QueryOption<N | undefined>;

export const release = {
  schema: releaseParam,
  description:
    'A published release `YYYY-MM` to read instead of the current one (GET /v1/releases lists them). Its answers never change: they are cached as immutable. Given once.',
  // The served document names the server's own two newest instead (openapi/prefill.ts).
  examples: [{ value: '2026-12' }, { value: '2026-11' }],
  errors: { badRelease: new InvalidParametersError({ release: ['Expected a release id like 2026-11'] }) },
  key: 'scope',
} satisfies QueryOption<string | undefined>;

/** The refusal of a request that names its release both ways. */
export const asOfWithRelease = new InvalidParametersError({
  as_of: ['Give as_of or release, not both: as_of picks the release that was served at that instant'],
  release: ['Give release or as_of, not both'],
});

export const asOf = {
  schema: asOfParam,
  description:
    'Answers as `release=` would for the release the service was serving at this instant, as the publication log records it (a rollback counts): a date `YYYY-MM-DD` means the end of that UTC day, an RFC 3339 instant itself; an instant not reached yet, what is served now. `meta.as_of` says what was asked and the release read, and `Content-Location` is the same request with `release=` instead, the URL to cite. Not with `release`. Given once.',
  // The served document names the instants the server's own two newest were published instead (openapi/prefill.ts).
  examples: [{ value: '2026-12-01T09:00:00Z' }, { value: '2026-11-02T09:00:00Z' }],
  errors: {
    badAsOf: new InvalidParametersError({ as_of: [AS_OF_EXPECTED] }),
    asOfWithRelease,
    noReleaseAsOf: new NoReleaseAsOfError('2000-01-01T23:59:59.999Z', '2026-11-02T09:00:00.000Z'),
  },
  // The scope's `asOf` holds it, beside the release it resolved to.
  key: 'scope',
} satisfies QueryOption<AsOf | undefined>;
