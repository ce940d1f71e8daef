import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Context } from 'koa';
import * as v from 'valibot';
import {
  ExportLimitError,
  ExportsOpenError,
  HeavyBudgetError,
  InvalidFilterDimensionError,
  RangeNotSatisfiableError,
  TooManyRequestsError,
} from '../../errors/index.ts';
import type { Decision, WindowState } from '../../limits/limiter.ts';
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
import { heavyWork } from '../respond/heavy-work.ts';
import { EXPORT_FORMATS, notAcceptable, responseFormat } from '../respond/negotiate.ts';
import { openExport } from '../respond/open-export.ts';
import { requestKey } from '../respond/request-key.ts';
import { acquireRelease } from '../respond/request-release.ts';
import { onResponseClosed } from '../respond/response-closed.ts';
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
  // The one place that lets go of what an export holds, however its response ends:
  // sent, refused, failed, or cut off by the client before or during the stream.
  let parts: AsyncGenerator<Buffer> | undefined;
  onResponseClosed(ctx, () => {
    hold.letGo();
    void parts?.return(undefined);
  });
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
  // What the export runs stops with this: the client gone, or the deadline to its first byte passed.
  const stop = new AbortController();
  parts =
    format.name === 'parquet'
      ? parquetFile(services, def, source, filters, period?.years, stop.signal)
      : served.rows.stream(
          format.name,
          matchingRids(services.db, served, whereClauses(served, filters, period?.years), BATCH, stop.signal),
        );
  const first = await inTurns(ctx, services, parts, stop);
  await charge(ctx, services);
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
  ctx.set('Cache-Control', cacheControl);
  ctx.type = format.contentType;
  ctx.body = Readable.from(first, { objectMode: false, highWaterMark: 1 });
}

/** Charges one export to the key's daily budget, or throws the 429 when it is spent. */
async function charge(ctx: Context, services: Services): Promise<void> {
  const decision = await budget(ctx, services, true);
  if (!decision.allowed) throw new ExportLimitError(services.limits.exports.policy.perMinute, decision.retryAfterSeconds);
}

/**
 * `parts` with each part made in the key's turn for heavy work (a batch of rows read
 * and rendered, the filtered Parquet file written). The first is made before the
 * answer starts, within the deadline: a server too busy for it answers a clean 503,
 * and one too slow a 504, not a cut-off file. The parts after it wait for their turns
 * but are never refused and have no deadline: the 200 has been sent, and
 * EXPORT_IDLE_SECONDS bounds a stream nobody reads. `stop` aborts with whatever
 * cancels a turn, so the part being made stops too.
 */
async function inTurns(
  ctx: Context,
  services: Services,
  parts: AsyncGenerator<Buffer>,
  stop: AbortController,
): Promise<AsyncIterable<Buffer>> {
  const next = (streaming: boolean) =>
    heavyWork(
      ctx,
      services,
      'export',
      (signal) => {
        const relay = () => stop.abort(signal.reason);
        signal.addEventListener('abort', relay, { once: true });
        return parts.next().finally(() => signal.removeEventListener('abort', relay));
      },
      { streaming },
    );
  const first = await next(false);
  return (async function* () {
    for (let part: IteratorResult<Buffer> = first; !part.done; part = await next(true)) yield part.value;
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
