import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import type { Context } from 'koa';
import * as v from 'valibot';
import { ExportLimitError, UnknownMetricError } from '../errors.ts';
import type { Decision, WindowState } from '../limits/limiter.ts';
import { copyParquet, matchingRids } from '../query/export.ts';
import { whereClauses } from '../query/filters.ts';
import { findDataset, type DatasetDef } from '../registry.ts';
import type { Services } from '../services.ts';
import { END_OF_STREAM } from '../store/arrow-renderer.ts';
import type { ServedDataset } from '../store/loader.ts';
import { NdjsonRenderer } from '../store/ndjson-renderer.ts';
import type { ReleaseHold } from '../store/resident-releases.ts';
import { IMMUTABLE } from './cacheable.ts';
import { dimensionFilters, filterParams, yearParam } from './dimension-filters.ts';
import { negotiateExport, type ExportFormat } from './export-formats.ts';
import { holdRelease } from './paging.ts';
import { parseQuery, periodParam, releaseParam, single } from './params.ts';
import { sendFile } from './send-file.ts';

// GET /v1/export: every row of a financial dataset that the filters match, in one
// response, as Parquet, CSV, Arrow or NDJSON (docs/api.md "Bulk export").

export const schema = v.objectWithRest(
  {
    metric: single(v.pipe(v.string(), v.minLength(1))),
    period: periodParam,
    release: releaseParam,
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'release']);

/** Rows per batch read and written: a few MB of text, so memory stays flat whatever the export's size. */
const BATCH = 16_384;

const ndjson = new WeakMap<ServedDataset, NdjsonRenderer>();

export async function handler(ctx: Context, services: Services): Promise<void> {
  const { metric, period, release: asked, ...params } = parseQuery(schema, ctx.query);
  const def = findDataset(metric, 'financial');
  if (!def) throw new UnknownMetricError(metric);
  const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
  const format = negotiateExport(ctx.get('accept'));
  ctx.vary('Accept');
  const hold = await holdRelease(services, { release: asked });
  let streaming = false;
  try {
    const release = hold.release;
    const served = release.datasets.get(def.name)!;
    const cacheControl = release.id === services.release.get()?.id ? services.cacheControl : IMMUTABLE;
    const filename = `${def.name}-${release.id}.${format.extension}`;
    const source = path.join(services.published.get(release.id)?.dir ?? '', release.manifest.datasets[def.name]!.file);
    // The release's own file is the export when nothing is filtered, if `etl load`
    // wrote it (normalized and in serving order; generated samples are not sorted).
    if (format.name === 'parquet' && filters.size === 0 && !period && release.manifest.published_at !== undefined) {
      const sha256 = release.manifest.datasets[def.name]!.sha256;
      const etag = `"${Buffer.from(sha256, 'hex').toString('base64url').slice(0, 22)}-parquet"`;
      // Only a whole 200 spends the export budget: a 304 or a resumed range does not.
      const range = ctx.get('range') !== '' || ctx.get('if-none-match') !== '';
      const decision = await budget(ctx, services, !range);
      if (!decision.allowed) throw new ExportLimitError(services.exportBudget.policy.perMinute, decision.retryAfterSeconds);
      ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
      await sendFile(ctx, { path: source, etag, contentType: format.contentType, cacheControl });
      return;
    }
    const decision = await budget(ctx, services, true);
    if (!decision.allowed) throw new ExportLimitError(services.exportBudget.policy.perMinute, decision.retryAfterSeconds);
    ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
    ctx.set('Cache-Control', cacheControl);
    ctx.type = format.contentType;
    const parts =
      format.name === 'parquet'
        ? parquetFile(services, def, source, filters, period?.years)
        : rows(services, served, format, whereClauses(served, filters, period?.years));
    // The stream owns the hold from here: it lets go when it ends, finished or cut off.
    ctx.body = Readable.from(held(parts, hold), { objectMode: false, highWaterMark: 1 });
    streaming = true;
  } finally {
    if (!streaming) hold.letGo();
  }
}

/** Counts this export against the key's daily export budget (`charge` false: reads it only) and shows it in headers. */
async function budget(ctx: Context, services: Services, charge: boolean): Promise<Decision> {
  const id = (ctx.state.key as { id: string }).id;
  const decision = charge ? await services.exportBudget.consume(id) : await services.exportBudget.peek(id);
  const day = decision.windows.find((w: WindowState) => w.name === 'day') ?? decision.windows[0]!;
  ctx.set('X-Export-Limit', String(day.limit));
  ctx.set('X-Export-Remaining', String(day.remaining));
  ctx.set('X-Export-Reset', String(day.resetSeconds));
  return decision;
}

async function* held(parts: AsyncGenerator<Buffer>, hold: ReleaseHold): AsyncGenerator<Buffer> {
  try {
    yield* parts;
  } finally {
    hold.letGo();
  }
}

/** Text or Arrow rendered from the release's column store, a batch of rows at a time. */
async function* rows(services: Services, served: ServedDataset, format: ExportFormat, clauses: ReturnType<typeof whereClauses>): AsyncGenerator<Buffer> {
  if (format.name === 'csv') yield Buffer.from(served.csv.header);
  if (format.name === 'arrow') yield served.arrow.streamStart;
  let renderer = ndjson.get(served);
  if (format.name === 'ndjson' && !renderer) ndjson.set(served, (renderer = new NdjsonRenderer(served.store)));
  const start = served.arrow.streamStart.length;
  for await (const rids of matchingRids(services.db, served, clauses, BATCH)) {
    if (format.name === 'csv') yield served.csv.render(rids, '', '');
    else if (format.name === 'ndjson') yield renderer!.render(rids, '', '');
    else {
      const page = served.arrow.render(rids);
      yield page.subarray(start, page.length - END_OF_STREAM.length);
    }
  }
  if (format.name === 'arrow') yield END_OF_STREAM;
}

/** Parquet of the matching rows, written by DuckDB to a scratch file, then sent and removed. */
async function* parquetFile(services: Services, def: DatasetDef, source: string, filters: Parameters<typeof copyParquet>[3], period: Parameters<typeof copyParquet>[4]): AsyncGenerator<Buffer> {
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

export function register(router: Router, services: Services): void {
  router.get('/v1/export', (ctx) => handler(ctx, services));
}

