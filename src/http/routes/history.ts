import fs from 'node:fs/promises';
import { NotReadyError, UnknownReleaseError } from '../../errors/index.ts';
import { HistoryTable } from '../../query/history.ts';
import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { fromAfterTo, HISTORY, tooManyReleases, wideWithoutAll } from '../../query/options/endpoints.ts';
import { dimensionFilters, filtersApplied } from '../../query/options/filter-values.ts';
import { keyParts } from '../../query/options/option.ts';
import { withdrawnReleases } from '../../releases/publication-log.ts';
import type { Releases } from '../../releases/releases.ts';
import { streamColumns } from '../../render/columns.ts';
import { PAGE_FORMATS } from '../../render/formats.ts';
import { historyTable } from '../../render/history.ts';
import { renderTable } from '../../render/table.ts';
import { HISTORY_SCHEMAS, historyOperation } from '../openapi/operations/history.ts';
import { respondWithExportStream } from '../respond/export-stream.ts';
import { readKept, respondWithKeptPage } from '../respond/kept-page.ts';
import { responseFormat } from '../respond/negotiate.ts';
import { holdUntilClosed } from '../respond/response-closed.ts';
import type { Route } from './route.ts';

// GET /v1/history: each observation of a financial dataset release after release,
// over the published releases (docs/api.md "History").

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

/**
 * The published releases, oldest first (a rollback's withdrawn ones are not), and the
 * ordinals among them of `from` (by default the first) and `to` (by default the current one).
 */
function historyReleases(
  releases: Pick<Releases, 'list'>,
  asked: { readonly from?: string; readonly to?: string },
  max: number,
): { published: string[]; from: number; to: number } {
  const published = [...releases.list()].reverse();
  if (published.length === 0) throw new NotReadyError();
  const at = (id: string) => {
    const i = published.indexOf(id);
    if (i < 0) throw new UnknownReleaseError(id);
    return i;
  };
  const from = at(asked.from ?? published[0]!);
  const to = at(asked.to ?? published.at(-1)!);
  if (from > to) throw fromAfterTo(published[from]!, published[to]!);
  if (to - from + 1 > max) throw tooManyReleases(max, published[from]!, published[to]!, to - from + 1);
  return { published, from, to };
}

export const history: Route = {
  path: HISTORY.path,
  endpoint: HISTORY,
  async handle(ctx, services) {
    const values = parseOptions(HISTORY, ctx.query);
    const { metric, period, limit, cursor, format: named, from: fromParam, to: toParam, output, shape, ...params } = values;
    if (shape === 'wide' && output !== 'all') throw wideWithoutAll;
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, HISTORY, params);
    const range = historyReleases(services.releases, { from: fromParam, to: toParam }, services.historyMaxReleases);
    const { published } = range;
    const [from, to, current] = [published[range.from]!, published[range.to]!, published.at(-1)!];
    const releases = published.map((id) => {
      const file = services.releases.fileOf(id, def.name);
      if (file === undefined) throw new UnknownReleaseError(id);
      return { id, file };
    });

    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    const kept = {
      kind: 'history' as const,
      kept: services.history,
      // Computed over every published release, so each of them is part of its key: another publication is another history.
      scope: {
        release: current,
        dataset: def.name,
        filters,
        period: period?.text,
        options: [...keyParts(HISTORY.options, { ...values, from, to }), ['published', published] as [string, unknown]],
      },
      releases: published,
      compute: (signal: AbortSignal) =>
        HistoryTable.compute(
          services.db,
          { def, releases, from: range.from, to: range.to, filters, period: period?.years, output, shape },
          signal,
        ).catch(async (err: Error) => {
          // Removed by `etl prune` under the request: the release is gone, not broken.
          for (const { id, file } of releases) if (!(await exists(file))) throw new UnknownReleaseError(id);
          throw err;
        }),
    };
    const parsed = cursor === undefined ? undefined : services.cursors.parse(cursor);
    // CSV and Arrow without `limit` are the whole history, streamed and charged as an export, as a whole diff is.
    if (format.name !== 'json' && ctx.query.limit === undefined) {
      const after = parsed === undefined ? -1 : services.cursors.after(parsed, { ...kept.scope, format: format.name });
      await respondWithExportStream(ctx, services, {
        parts: async () => {
          const table = await readKept(ctx, services, kept, (table) => {
            holdUntilClosed(ctx, table.hold());
            return table;
          });
          return streamColumns(format.name as 'csv' | 'arrow', table.columns, table.batches(after + 1));
        },
        contentType: format.contentType,
        filename: `${def.name}-history-${output}-${from}-${to}.${format.extension}`,
        cacheControl: services.releases.cacheControlFor(current),
      });
      return;
    }
    const withdrawn = [...withdrawnReleases(services.releases.publications())].reverse().map(([id, at]) => ({ id, withdrawn_at: at }));
    await respondWithKeptPage(ctx, services, {
      ...kept,
      format,
      cursor: parsed,
      limit,
      count: (table) => table.count,
      render: async (table, { start, end, pagination }) => {
        const rows = await table.rows(start, end);
        const meta = {
          dataset: def.name,
          metric: def.name,
          from,
          to,
          releases: published.slice(range.from, range.to + 1),
          output,
          shape,
          withdrawn,
          filters_applied: filtersApplied(filters, period),
          row_count: rows.count,
        };
        return renderTable(format.name, historyTable(rows), { meta, pagination });
      },
    });
  },
  operation: historyOperation(HISTORY),
  schemas: HISTORY_SCHEMAS,
};
