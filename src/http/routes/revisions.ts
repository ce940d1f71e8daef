import fs from 'node:fs/promises';
import * as v from 'valibot';
import {
  InvalidCursorError,
  InvalidFilterDimensionError,
  InvalidParametersError,
  NotReadyError,
  UnknownReleaseError,
} from '../../errors.ts';
import { CHANGES, RevisionDiff } from '../../query/revisions.ts';
import { canonicalScope, type QueryScope } from '../../query/scope.ts';
import { findDataset } from '../../registry.ts';
import { revisionTable } from '../../render/revisions.ts';
import { renderTable } from '../../render/table.ts';
import { releaseId } from '../openapi/components.ts';
import { exampleRequest } from '../openapi/examples.ts';
import { financialParameters, financialSets } from '../openapi/parameters.ts';
import { keyedErrors, metricErrors, pageResponses, ref, unknownRelease } from '../openapi/responses.ts';
import { dimensionFilters, filterParams, filtersApplied, yearParam } from '../params/dimension-filters.ts';
import { datasetParam, financialDataset } from '../params/metric.ts';
import { cursorParam, formatParam, limitParam, parseQuery, periodParam, releaseParam, repeatable } from '../params/params.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import { heavyWork } from '../respond/heavy-work.ts';
import { PAGE_FORMATS, responseFormat } from '../respond/negotiate.ts';
import { setNextPage, slicePage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/revisions: the rows of a financial dataset that differ between two
// published releases (docs/api.md "Revisions").

export const schema = v.objectWithRest(
  {
    metric: datasetParam('metric', 'financial'),
    period: periodParam,
    limit: limitParam(100),
    cursor: cursorParam,
    format: formatParam(PAGE_FORMATS),
    from: releaseParam,
    to: releaseParam,
    change: v.optional(repeatable(v.picklist(CHANGES, 'Expected added, removed or changed'))),
    year: yearParam,
  },
  filterParams,
);

const CONTROL_PARAMS = new Set(['metric', 'period', 'limit', 'cursor', 'format', 'from', 'to', 'change']);

const DESCRIPTIONS = {
  from: 'The earlier release `YYYY-MM`; by default the one published before `to`. Given once.',
  to: 'The later release `YYYY-MM`; by default the current one. Given once.',
  change: `Only rows of these kinds: ${CHANGES.join(', ')}; repeat for several.`,
};

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
    const { releases } = services;
    const current = releases.current();
    if (!current) throw new NotReadyError();
    const to = toParam ?? current.id;
    if (!releases.isPublished(to)) throw new UnknownReleaseError(to);
    const from = fromParam ?? releases.previous(to);
    if (from === undefined)
      throw new InvalidParametersError({
        from: [`No release was published before ${to}: name the release to compare with, as from=YYYY-MM`],
      });
    if (!releases.isPublished(from)) throw new UnknownReleaseError(from);
    const changes = change && [...new Set(change)].sort((a, b) => CHANGES.indexOf(a) - CHANGES.indexOf(b));

    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    // The cursor and cache key name `to` as their release, and `from` and the kinds of change as the shape.
    const scope: QueryScope = {
      release: to,
      dataset: def.name,
      filters,
      period: period?.text,
      shape: JSON.stringify(['revisions', from, changes ?? null]),
      format: format.name,
    };
    const after = cursor === undefined ? -1 : services.cursors.decode(cursor, scope);
    const whole = JSON.stringify(['revisions', ...canonicalScope(scope)]);
    const files = { from: releases.fileOf(from, def.name), to: releases.fileOf(to, def.name) };
    // A diff is heavy work: computed in its key's turn, into a DuckDB table that its pages read.
    const compute = () =>
      heavyWork(ctx, services, 'revisions', () =>
        RevisionDiff.compute(services.db, { def, ...files, filters, period: period?.years, changes }),
      ).catch(async (err: Error) => {
        // Removed by `etl prune` under the request: the release is gone, not broken.
        if (!(await exists(files.from))) throw new UnknownReleaseError(from);
        if (!(await exists(files.to))) throw new UnknownReleaseError(to);
        throw err;
      });
    const render = () =>
      services.revisions.read(whole, [from, to], compute, async (diff) => {
        const { start, end, pagination } = slicePage(services, scope, diff.count, after, limit);
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
        return {
          body: renderTable(format.name, revisionTable({ def, result: rows, changes: CHANGES, start: 0, end: rows.count }), {
            meta,
            pagination,
          }),
          next: pagination.cursor || undefined,
        };
      });
    const key = JSON.stringify([format.name, whole, limit, after]);
    const next = await respondCacheable(ctx, services, { key, contentType: format.contentType, render, release: to });
    setNextPage(ctx, format.name, next);
  },
  operation: {
    operationId: 'getRevisions',
    tags: ['data'],
    summary: 'Rows of a financial dataset that differ between two published releases',
    description:
      'Rows matched by their dimension values: `added` (only in `to`), `removed` (only in `from`) or `changed` (any metric differs), with their values in each release. Takes every filter of /v1/financials. Pages follow the dimension values in order; one walk computes the diff once.',
    parameters: financialParameters(schema, DESCRIPTIONS),
    'x-codeSamples': exampleRequest('/v1/revisions?metric=ggr&country=France&change=changed&limit=5'),
    responses: {
      ...pageResponses('RevisionsResponse', {
        csv: 'RFC 4180 CSV with a header row: the dimensions, `change`, then `before_<metric>` and `after_<metric>` per metric; empty where the row is absent.',
        arrow: 'Arrow IPC stream: text dimensions and `change` Utf8, `year` Int32, values Float64; null where the row is absent.',
      }),
      ...keyedErrors({
        ...metricErrors(schema),
        noEarlierRelease: new InvalidParametersError({
          from: ['No release was published before 2026-07: name the release to compare with, as from=YYYY-MM'],
        }),
        invalidFilterDimension: new InvalidFilterDimensionError('product', 'fx', findDataset('fx', 'financial')!.dimensions),
        invalidCursor: new InvalidCursorError(),
      }),
      ...unknownRelease(),
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
    RevisionsResponse: {
      type: 'object',
      additionalProperties: false,
      required: ['meta', 'data', 'pagination'],
      properties: {
        meta: {
          type: 'object',
          additionalProperties: false,
          required: ['dataset', 'metric', 'from', 'to', 'filters_applied', 'row_count'],
          properties: {
            dataset: { enum: financialSets.map((d) => d.name) },
            metric: { enum: financialSets.map((d) => d.name) },
            from: releaseId,
            to: releaseId,
            change: {
              type: 'array',
              items: { enum: [...CHANGES] },
              description: 'The kinds of change asked for, when `change` was given.',
            },
            filters_applied: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
            row_count: { type: 'integer', minimum: 0, description: 'Rows in this page.' },
          },
        },
        data: { type: 'array', items: ref('RevisionRow') },
        pagination: ref('Pagination'),
      },
    },
  },
};
