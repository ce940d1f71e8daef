import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import * as v from 'valibot';
import {
  ExportLimitError,
  ExportsOpenError,
  InvalidFilterDimensionError,
  RangeNotSatisfiableError,
  TooManyRequestsError,
} from '../../errors/index.ts';
import type { Decision, WindowState } from '../../limits/limiter.ts';
import { copyParquet, matchingRids } from '../../query/export.ts';
import { type Filters, whereClauses, type YearRange } from '../../query/filters.ts';
import { type DatasetDef, findDataset } from '../../registry.ts';
import type { ReleaseHandle } from '../../releases/releases.ts';
import { FORMATS } from '../../render/formats.ts';
import type { Services } from '../../services.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters } from '../openapi/parameters.ts';
import { errorResponse, headerRefs, keyedErrors, LIMIT_HEADERS, metricErrors, unknownRelease } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, yearParam } from '../params/dimension-filters.ts';
import { datasetParam, financialDataset } from '../params/metric.ts';
import { formatParam, parseQuery, periodParam, releaseParam } from '../params/params.ts';
import { heavyWork } from '../respond/heavy-work.ts';
import { EXPORT_FORMATS, notAcceptable, responseFormat } from '../respond/negotiate.ts';
import { openExport } from '../respond/open-export.ts';
import { requestKey } from '../respond/request-key.ts';
import { acquireRelease } from '../respond/request-release.ts';
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

async function handle(ctx: Context, services: Services): Promise<void> {
  const { metric, period, format: named, release: asked, ...params } = parseQuery(schema, ctx.query);
  const def = financialDataset(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const format = responseFormat(ctx.get('accept'), named, EXPORT_FORMATS);
  ctx.vary('Accept');
  const hold = await acquireRelease(ctx, services, { release: asked });
  let streaming = false;
  try {
    const release = hold.release;
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
      if (reply.status === 304) await budget(ctx, services, false);
      else {
        try {
          openExport(ctx, services);
          await charge(ctx, services);
        } catch (err) {
          await reply.discard();
          throw err;
        }
        ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
      }
      reply.send();
      return;
    }
    openExport(ctx, services);
    // Read before the work, charged after it: a key whose budget is spent sets nothing running, and a busy server charges nothing.
    const spent = await budget(ctx, services, false);
    if (!spent.allowed) throw new ExportLimitError(services.limits.exports.policy.perMinute, spent.retryAfterSeconds);
    const rows =
      format.name === 'parquet'
        ? parquetFile(services, def, source, filters, period?.years)
        : served.rows.stream(format.name, matchingRids(services.db, served, whereClauses(served, filters, period?.years), BATCH));
    const parts = await inTurns(ctx, services, rows);
    try {
      await charge(ctx, services);
    } catch (err) {
      await parts.return(undefined);
      throw err;
    }
    ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
    ctx.set('Cache-Control', cacheControl);
    ctx.type = format.contentType;
    // The stream owns the hold from here: it lets go when it ends, finished or cut off.
    ctx.body = Readable.from(held(parts, hold), { objectMode: false, highWaterMark: 1 });
    streaming = true;
  } finally {
    if (!streaming) hold.letGo();
  }
}

/** Charges one export to the key's daily budget, or throws the 429 when it is spent. */
async function charge(ctx: Context, services: Services): Promise<void> {
  const decision = await budget(ctx, services, true);
  if (!decision.allowed) throw new ExportLimitError(services.limits.exports.policy.perMinute, decision.retryAfterSeconds);
}

/**
 * `parts` with each part made in the key's turn for heavy work (a batch of rows read
 * and rendered, the filtered Parquet file written), the first before the answer
 * starts: a server too busy for it answers a clean 503, not a cut-off file.
 */
async function inTurns(ctx: Context, services: Services, parts: AsyncGenerator<Buffer>): Promise<AsyncGenerator<Buffer>> {
  const next = () => heavyWork(ctx, services, 'export', () => parts.next());
  let first: IteratorResult<Buffer>;
  try {
    first = await next();
  } catch (err) {
    await parts.return(undefined);
    throw err;
  }
  return (async function* () {
    try {
      for (let part = first; !part.done; part = await next()) yield part.value;
    } finally {
      await parts.return(undefined);
    }
  })();
}

/** Counts this export against the key's daily export budget (`charge` false: reads it only) and shows it in headers. */
async function budget(ctx: Context, services: Services, charge: boolean): Promise<Decision> {
  const { id } = requestKey(ctx);
  const decision = charge ? await services.limits.exports.consume(id) : await services.limits.exports.peek(id);
  const day = decision.windows.find((w: WindowState) => w.name === 'day') ?? decision.windows[0]!;
  ctx.set('X-Export-Limit', String(day.limit));
  ctx.set('X-Export-Remaining', String(day.remaining));
  ctx.set('X-Export-Reset', String(day.resetSeconds));
  return decision;
}

async function* held(parts: AsyncGenerator<Buffer>, hold: ReleaseHandle): AsyncGenerator<Buffer> {
  try {
    yield* parts;
  } finally {
    hold.letGo();
  }
}

/** Parquet of the matching rows, written by DuckDB to a scratch file, then sent and removed. */
async function* parquetFile(
  services: Services,
  def: DatasetDef,
  source: string,
  filters: Filters,
  period: YearRange | undefined,
): AsyncGenerator<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'dqs-export-'));
  try {
    const out = path.join(dir, `${def.name}.parquet`);
    await copyParquet(services.db, def, source, filters, period, out);
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
    parameters: financialParameters(schema),
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
        "A rate limit (spec 8) or the key's daily export budget is spent, or the key has EXPORTS_OPEN_PER_KEY exports still open; retry after `Retry-After` seconds.",
        {
          limited: new TooManyRequestsError(42),
          exportLimited: new ExportLimitError(50, 3600),
          exportsOpen: new ExportsOpenError(2, 10),
        },
        headerRefs([...LIMIT_HEADERS, 'Retry-After']),
      ),
      ...unknownRelease(),
    },
  },
};
