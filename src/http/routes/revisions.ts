import fs from 'node:fs/promises';
import { UnknownReleaseError } from '../../errors/index.ts';
import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { REVISIONS } from '../../query/options/endpoints.ts';
import { dimensionFilters, filtersApplied } from '../../query/options/filter-values.ts';
import { keyParts } from '../../query/options/option.ts';
import { CHANGES, RevisionDiff } from '../../query/revisions.ts';
import { PAGE_FORMATS } from '../../render/formats.ts';
import { revisionTable, streamRevisions } from '../../render/revisions.ts';
import { renderTable } from '../../render/table.ts';
import { REVISIONS_SCHEMAS, revisionsOperation } from '../openapi/operations/revisions.ts';
import { respondWithExportStream } from '../respond/export-stream.ts';
import { readKept, respondWithKeptPage } from '../respond/kept-page.ts';
import { responseFormat } from '../respond/negotiate.ts';
import { comparedReleases } from '../respond/request-release.ts';
import { holdUntilClosed } from '../respond/response-closed.ts';
import type { Route } from './route.ts';

// GET /v1/revisions: the rows of a financial dataset that differ between two
// published releases (docs/api.md "Revisions").

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

export const revisions: Route = {
  path: REVISIONS.path,
  endpoint: REVISIONS,
  async handle(ctx, services) {
    const values = parseOptions(REVISIONS, ctx.query);
    const { metric, period, limit, cursor, format: named, from: fromParam, to: toParam, change: changes, ...params } = values;
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, REVISIONS, params);
    const { from, to, files } = comparedReleases(services.releases, { from: fromParam, to: toParam }, def.name);

    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    const kept = {
      kind: 'revisions' as const,
      kept: services.revisions,
      // `from` and `to` are keyed as they resolved: a default that moves is another diff.
      scope: {
        release: to,
        dataset: def.name,
        filters,
        period: period?.text,
        options: keyParts(REVISIONS.options, { ...values, from, to }),
      },
      releases: [from, to],
      // Into a DuckDB table that its pages read.
      compute: (signal: AbortSignal) =>
        RevisionDiff.compute(services.db, { def, ...files, filters, period: period?.years, changes }, signal).catch(async (err: Error) => {
          // Removed by `etl prune` under the request: the release is gone, not broken.
          if (!(await exists(files.from))) throw new UnknownReleaseError(from);
          if (!(await exists(files.to))) throw new UnknownReleaseError(to);
          throw err;
        }),
    };
    const parsed = cursor === undefined ? undefined : services.cursors.parse(cursor);
    // CSV and Arrow without `limit` are the whole diff, streamed and charged as an export (docs/api.md "Releases and revisions").
    if (format.name !== 'json' && ctx.query.limit === undefined) {
      const after = parsed === undefined ? -1 : services.cursors.after(parsed, { ...kept.scope, format: format.name });
      await respondWithExportStream(ctx, services, {
        parts: async () => {
          const diff = await readKept(ctx, services, kept, (diff) => {
            holdUntilClosed(ctx, diff.hold());
            return diff;
          });
          return streamRevisions(format.name as 'csv' | 'arrow', def, CHANGES, diff.batches(after + 1));
        },
        contentType: format.contentType,
        filename: `${def.name}-revisions-${from}-${to}.${format.extension}`,
        cacheControl: services.releases.cacheControlFor(to),
      });
      return;
    }
    await respondWithKeptPage(ctx, services, {
      ...kept,
      format,
      cursor: parsed,
      limit,
      count: (diff) => diff.count,
      render: async (diff, { start, end, pagination }) => {
        const rows = await diff.rows(start, end);
        const meta = {
          dataset: def.name,
          metric: def.name,
          from,
          to,
          ...(changes && { change: changes }),
          filters_applied: filtersApplied(filters, period),
          row_count: end - start,
        };
        return renderTable(format.name, revisionTable({ def, result: rows, changes: CHANGES, start: 0, end: rows.count }), {
          meta,
          pagination,
        });
      },
    });
  },
  operation: revisionsOperation(REVISIONS),
  schemas: REVISIONS_SCHEMAS,
};
