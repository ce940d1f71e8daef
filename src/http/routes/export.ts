import fs from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import {
  ExportLimitError,
  ExportsOpenError,
  HeavyBudgetError,
  InvalidFilterDimensionError,
  RangeNotSatisfiableError,
  TooManyRequestsError,
} from '../../errors/index.ts';
import { copyParquet, matchingRids } from '../../query/export.ts';
import { type Filters, whereClauses, type YearRange } from '../../query/filters.ts';
import { type DatasetDef, findDataset } from '../../registry.ts';
import { FORMATS } from '../../render/formats.ts';
import type { Services } from '../../services.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters, PREFER_WAIT } from '../openapi/parameters.ts';
import { errorResponse, headerRefs, keyedErrors, LIMIT_HEADERS, metricErrors, releaseResponses } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, yearParam } from '../params/dimension-filters.ts';
import { datasetParam, financialDataset } from '../params/metric.ts';
import { formatParam, parseQuery, periodParam, releaseParam } from '../params/params.ts';
import type { RequestContext } from '../request-state.ts';
import { chargeExport, exportBudget, respondWithExportStream } from '../respond/export-stream.ts';
import { EXPORT_FORMATS, notAcceptable, responseFormat } from '../respond/negotiate.ts';
import { openExport } from '../respond/open-export.ts';
import { withRelease } from '../respond/request-release.ts';
import { replyWithFile } from '../respond/send-file.ts';
import type { Route } from './route.ts';

// GET /v1/export: every row of a financial dataset that the filters match, in one
// response, as Parquet, CSV, Arrow or NDJSON (docs/api.md "Bulk export").

export const schema = v.objectWithRest(
  {
    metric: datasetParam('metric', 'financial'),
    period: periodParam,
    format: formatParam(EXPORT_FORMATS),
    release: releaseParam,
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'format', 'release']);

/** Rows per batch read and written: a few MB of text, so memory stays flat whatever the export's size. */
const BATCH = 16_384;

async function handle(ctx: RequestContext, services: Services): Promise<void> {
  const { metric, period, format: named, release: asked, ...params } = parseQuery(schema, ctx.query);
  const def = financialDataset(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const format = responseFormat(ctx.get('accept'), named, EXPORT_FORMATS);
  ctx.vary('Accept');
  await withRelease(ctx, services, { release: asked }, async (release) => {
    const served = release.datasets.get(def.name)!;
    const cacheControl = services.releases.cacheControlFor(release.id);
    const filename = `${def.name}-${release.id}.${format.extension}`;
    const source = path.join(release.dir, release.manifest.datasets[def.name]!.file);
    // The release's own file is the export when nothing is filtered, if `etl load`
    // wrote it (normalized and in serving order; generated samples are not sorted).
    if (format.name === 'parquet' && filters.size === 0 && !period && release.manifest.published_at !== undefined) {
      const sha256 = release.manifest.datasets[def.name]!.sha256;
      const etag = `"${Buffer.from(sha256, 'hex').toString('base64url').slice(0, 22)}-parquet"`;
      const reply = await replyWithFile(ctx, { path: source, etag, contentType: format.contentType, cacheControl });
      // Every answer that sends bytes of the file costs one export, a range or a resume too: a free resume would be a free whole file (bytes=1-).
      if (reply.status === 304) await exportBudget(ctx, services, false);
      else {
        try {
          openExport(ctx, services);
          await chargeExport(ctx, services);
        } catch (err) {
          await reply.discard();
          throw err;
        }
        ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
      }
      reply.send();
      return;
    }
    // What the export runs stops with its `stop`: the client gone, or the deadline to its first byte passed.
    await respondWithExportStream(ctx, services, {
      parts: async (stop) =>
        format.name === 'parquet'
          ? parquetFile(services, def, source, filters, period?.years, stop)
          : served.rows.stream(format.name, matchingRids(services.db, served, whereClauses(served, filters, period?.years), BATCH, stop)),
      contentType: format.contentType,
      filename,
      cacheControl,
    });
  });
}

/** Parquet of the matching rows, written by DuckDB to a scratch file, then sent and removed. */
async function* parquetFile(
  services: Services,
  def: DatasetDef,
  source: string,
  filters: Filters,
  period: YearRange | undefined,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  const dir = await fs.mkdtemp(path.join(services.scratchDir, 'export-'));
  try {
    const out = path.join(dir, `${def.name}.parquet`);
    await copyParquet(services.db, def, source, filters, period, out, signal);
    const handle = await fs.open(out, 'r');
    try {
      for await (const chunk of handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false })) yield chunk as Buffer;
    } finally {
      await handle.close();
    }
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const mediaTypes = EXPORT_FORMATS.map((f) => FORMATS[f].mediaType);

export const exporter: Route = {
  path: '/v1/export',
  handle,
  operation: {
    operationId: 'getExport',
    tags: ['data'],
    summary: 'Every matching row of a financial dataset in one file',
    description: `The rows /v1/financials would page for the same filters and release, in the same order, as flat columns (the dimensions, then the metrics; \`year\` INTEGER, metrics DOUBLE), in one response. \`format\` (${EXPORT_FORMATS.join(', ')}) or else \`Accept\` picks the file: ${mediaTypes.map((t) => `\`${t}\``).join(', ')}; none or \`*/*\` is Parquet. Counts one request and one export of the key's daily export budget. Unfiltered Parquet is the release's own published file: ETag, 304, and \`Range\` for resumable downloads.`,
    parameters: [...financialParameters(schema), PREFER_WAIT],
    'x-codeSamples': exampleRequest('/v1/export?metric=fx&fx_local_currency=JPY&format=csv'),
    responses: {
      200: {
        description: 'The whole export.',
        headers: headerRefs([
          ...LIMIT_HEADERS,
          'X-Export-Limit',
          'X-Export-Remaining',
          'X-Export-Reset',
          'Content-Disposition',
          'Cache-Control',
        ]),
        content: Object.fromEntries(mediaTypes.map((t) => [t, { schema: { type: 'string', contentMediaType: t } }])),
      },
      206: {
        description: "The byte range asked for of the release's own Parquet file (unfiltered Parquet only).",
        headers: headerRefs([...LIMIT_HEADERS, 'Content-Range', 'Accept-Ranges', 'ETag', 'Content-Disposition']),
        content: { 'application/vnd.apache.parquet': { schema: { type: 'string', contentMediaType: 'application/vnd.apache.parquet' } } },
      },
      304: { description: "If-None-Match holds the whole file's ETag.", headers: headerRefs([...LIMIT_HEADERS, 'ETag']) },
      406: errorResponse(
        '`Accept` names no export format, and no `format` chose one.',
        { notAcceptable: notAcceptable(EXPORT_FORMATS) },
        headerRefs(LIMIT_HEADERS),
      ),
      416: errorResponse(
        '`Range` starts past the end of the file.',
        { rangeNotSatisfiable: new RangeNotSatisfiableError(1234) },
        headerRefs(LIMIT_HEADERS),
      ),
      ...keyedErrors({
        ...metricErrors(schema),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', findDataset('fx', 'financial')!.dimensions),
      }),
      429: errorResponse(
        "A rate limit (spec 8), the key's daily export budget or its heavy-seconds budget is spent, or the key has EXPORTS_OPEN_PER_KEY exports still open; retry after `Retry-After` seconds.",
        {
          limited: new TooManyRequestsError(42),
          exportLimited: new ExportLimitError(50, 3600),
          exportsOpen: new ExportsOpenError(2, 10),
          heavyBudget: new HeavyBudgetError(60, 12),
        },
        headerRefs([...LIMIT_HEADERS, 'Retry-After', 'X-Heavy-Remaining']),
      ),
      ...releaseResponses(),
    },
  },
};
