import fs from 'node:fs/promises';
import * as v from 'valibot';
import {
  ExportLimitError,
  ExportsOpenError,
  HeavyBudgetError,
  InvalidCursorError,
  InvalidFilterDimensionError,
  TooManyRequestsError,
  UnknownReleaseError,
} from '../../errors/index.ts';
import { CHANGES, RevisionDiff } from '../../query/revisions.ts';
import { type DatasetDef, findDataset } from '../../registry.ts';
import { revisionTable } from '../../render/revisions.ts';
import { renderTable, streamTable, type TablePage } from '../../render/table.ts';
import { envelope, releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters, financialSets, PREFER_WAIT } from '../openapi/parameters.ts';
import { DOCUMENTED_RELEASES } from '../openapi/prefill.ts';
import {
  errorResponse,
  headerRefs,
  keyedErrors,
  LIMIT_HEADERS,
  metricErrors,
  pageResponses,
  ref,
  releaseResponses,
} from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { financialDataset } from '../params/metric.ts';
import { financialPageParams } from '../params/page.ts';
import { parseQuery, releaseParam, repeatable } from '../params/params.ts';
import { respondWithExportStream } from '../respond/export-stream.ts';
import { readKept, respondWithKeptPage } from '../respond/kept-page.ts';
import { PAGE_FORMATS, responseFormat } from '../respond/negotiate.ts';
import { comparedReleases } from '../respond/request-release.ts';
import { holdUntilClosed } from '../respond/response-closed.ts';
import type { Route } from './route.ts';

// GET /v1/revisions: the rows of a financial dataset that differ between two
// published releases (docs/api.md "Revisions").

/** Parameters that shape the answer rather than filter rows. */
const controls = {
  ...financialPageParams(100),
  from: releaseParam,
  to: releaseParam,
  change: v.optional(repeatable(v.picklist(CHANGES, 'Expected added, removed or changed'))),
};

export const schema = v.objectWithRest({ ...controls, year: yearParam }, filterParams);

const CONTROL_PARAMS = new Set(Object.keys(controls));

const DESCRIPTIONS = {
  limit:
    'Rows per page, given once. Without it, JSON pages by 100 and **CSV and Arrow stream every row of the diff**, charged as one export (the daily export budget, EXPORTS_OPEN_PER_KEY), so `pandas.read_csv` or R reads the whole diff from one URL; with it, every format pages and no export is charged.',
  from: 'The earlier release `YYYY-MM`; by default the one published before `to`, or `to` itself when there is none (an empty page). Given once.',
  to: 'The later release `YYYY-MM`; by default the current one. Given once.',
  change: `Only rows of these kinds: ${CHANGES.join(', ')}; repeat for several.`,
};

/** Rows of a diff read from DuckDB per batch of a whole answer: a few MB of text, so memory stays flat whatever the diff's size. */
const BATCH = 16_384;

/** Rows `start` to the end of a diff, as tables of BATCH rows at most; one empty table for none. */
async function* diffTables(def: DatasetDef, diff: RevisionDiff, start: number): AsyncGenerator<TablePage> {
  for (let at = start; ; at += BATCH) {
    const end = Math.max(at, Math.min(at + BATCH, diff.count));
    const rows = await diff.rows(at, end);
    yield revisionTable({ def, result: rows, changes: CHANGES, start: 0, end: rows.count });
    if (end >= diff.count) return;
  }
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false,
  );

export const revisions: Route = {
  path: '/v1/revisions',
  async handle(ctx, services) {
    const { metric, period, limit, cursor, format: named, from: fromParam, to: toParam, change, ...params } = parseQuery(schema, ctx.query);
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, CONTROL_PARAMS, params);
    const { from, to, files } = comparedReleases(services.releases, { from: fromParam, to: toParam }, def.name);
    const changes = change && [...new Set(change)].sort((a, b) => CHANGES.indexOf(a) - CHANGES.indexOf(b));

    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    const kept = {
      kind: 'revisions' as const,
      kept: services.revisions,
      // The cursor and cache key name `to` as their release, and `from` and the kinds of change as the shape.
      scope: { release: to, dataset: def.name, filters, period: period?.text, shape: JSON.stringify(['revisions', from, changes ?? null]) },
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
          return streamTable(format.name as 'csv' | 'arrow', diffTables(def, diff, after + 1));
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
  operation: {
    operationId: 'getRevisions',
    tags: ['data'],
    summary: 'Rows of a financial dataset that differ between two published releases',
    description:
      'Rows matched by their dimension values: `added` (only in `to`), `removed` (only in `from`) or `changed` (any metric differs), with their values in each release. Takes every filter of /v1/financials. Pages follow the dimension values in order; one walk computes the diff once. CSV and Arrow without `limit` are the whole diff in one streamed answer, charged as one export.',
    parameters: [...financialParameters(schema, DESCRIPTIONS), PREFER_WAIT],
    // The document names the serving server's two newest releases in place of these (prefill.ts).
    'x-codeSamples': exampleRequest(
      `/v1/revisions?metric=ggr&from=${DOCUMENTED_RELEASES.previous}&to=${DOCUMENTED_RELEASES.latest}&country=France&change=changed&limit=5`,
    ),
    responses: {
      ...pageResponses(
        'RevisionsResponse',
        {
          csv: 'RFC 4180 CSV with a header row: the dimensions, `change`, then `before_<metric>` and `after_<metric>` per metric; empty where the row is absent. Without `limit`: every row of the diff.',
          arrow:
            'Arrow IPC stream: text dimensions and `change` Utf8, `year` Int32, values Float64; null where the row is absent. Without `limit`: every row of the diff, a record batch per 4,096, every field nullable.',
        },
        {
          description:
            'CSV and Arrow without `limit`: every row of the diff, streamed as `/v1/export` streams and charged as one export (`X-Export-*`, `Content-Disposition`; no ETag), with no `Link`.',
          streamed: true,
        },
      ),
      ...keyedErrors({
        ...metricErrors(schema),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', findDataset('fx', 'financial')!.dimensions),
        invalidCursor: new InvalidCursorError(),
      }),
      429: errorResponse(
        "A rate limit (spec 8) or the key's heavy-seconds budget is spent; for CSV or Arrow without `limit`, also the key's daily export budget, or the key has EXPORTS_OPEN_PER_KEY exports open. Retry after `Retry-After` seconds.",
        {
          limited: new TooManyRequestsError(42),
          heavyBudget: new HeavyBudgetError(60, 12),
          exportLimited: new ExportLimitError(50, 3600),
          exportsOpen: new ExportsOpenError(2, 10),
        },
        headerRefs([...LIMIT_HEADERS, 'Retry-After', 'X-Heavy-Remaining']),
      ),
      ...releaseResponses(),
    },
  },
  schemas: {
    RevisionRow: {
      type: 'object',
      additionalProperties: false,
      required: ['dimensions', 'change', 'before', 'after'],
      properties: {
        dimensions: { type: 'object', additionalProperties: { type: ['string', 'integer'] } },
        change: { enum: [...CHANGES] },
        before: {
          type: ['object', 'null'],
          description: 'The metrics in `from`; null for an added row.',
          additionalProperties: { type: 'number' },
        },
        after: {
          type: ['object', 'null'],
          description: 'The metrics in `to`; null for a removed row.',
          additionalProperties: { type: 'number' },
        },
      },
    },
    RevisionsResponse: envelope(
      ref('RevisionRow'),
      {
        dataset: { enum: financialSets.map((d) => d.name) },
        metric: { enum: financialSets.map((d) => d.name) },
        from: releaseId,
        to: releaseId,
        filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
        row_count: { type: 'integer', minimum: 0, description: 'Rows in this page.' },
      },
      {
        change: {
          type: 'array',
          items: { enum: [...CHANGES] },
          description: 'The kinds of change asked for, when `change` was given.',
        },
      },
    ),
  },
};
