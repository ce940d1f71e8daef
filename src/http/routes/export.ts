import fs from 'node:fs/promises';
import path from 'node:path';
import { copyParquet, matchingRids } from '../../query/export.ts';
import { type Filters, whereClauses, type YearRange } from '../../query/filters.ts';
import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { EXPORT } from '../../query/options/endpoints.ts';
import { dimensionFilters } from '../../query/options/filter-values.ts';
import type { DatasetDef } from '../../registry.ts';
import { EXPORT_FORMATS } from '../../render/formats.ts';
import type { Services } from '../../services.ts';
import { exportOperation } from '../openapi/operations/export.ts';
import type { RequestContext } from '../request-state.ts';
import { releaseNamed } from '../respond/as-of.ts';
import { chargeExport, exportBudget, respondWithExportStream } from '../respond/export-stream.ts';
import { responseFormat } from '../respond/negotiate.ts';
import { openExport } from '../respond/open-export.ts';
import { withRelease } from '../respond/request-release.ts';
import { replyWithFile } from '../respond/send-file.ts';
import type { Route } from './route.ts';

// GET /v1/export: every row of a financial dataset that the filters match, in one
// response, as Parquet, CSV, Arrow or NDJSON (docs/api.md "Bulk export").

/** Rows per batch read and written: a few MB of text, so memory stays flat whatever the export's size. */
const BATCH = 16_384;

async function handle(ctx: RequestContext, services: Services): Promise<void> {
  const values = parseOptions(EXPORT, ctx.query);
  const { metric, period, format: named } = values;
  const { release: asked } = releaseNamed(ctx, services.releases, values);
  const def = financialDataset(metric);
  const filters = dimensionFilters(ctx.query, def, EXPORT, values);
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

export const exporter: Route = {
  path: EXPORT.path,
  endpoint: EXPORT,
  handle,
  operation: exportOperation(EXPORT),
};
