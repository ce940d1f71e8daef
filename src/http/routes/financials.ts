import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { FINANCIALS } from '../../query/options/endpoints.ts';
import { dimensionFilters, filtersApplied } from '../../query/options/filter-values.ts';
import { keyParts } from '../../query/options/option.ts';
import { FINANCIALS_SCHEMAS, financialsOperation } from '../openapi/operations/financials.ts';
import { releaseNamed } from '../respond/as-of.ts';
import { respondWithPage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/financials: one keyset page of a financial dataset's rows (spec 2.2).

export const financials: Route = {
  path: FINANCIALS.path,
  endpoint: FINANCIALS,
  async handle(ctx, services) {
    const values = parseOptions(FINANCIALS, ctx.query);
    const { metric, period, limit, cursor, format, release: named, as_of: asOf, ...params } = values;
    const { release, asOf: asOfMeta } = releaseNamed(ctx, services.releases, { release: named, as_of: asOf });
    const def = financialDataset(metric);
    const filters = dimensionFilters(ctx.query, def, FINANCIALS, params);
    const applied = filtersApplied(filters, period);
    await respondWithPage(ctx, services, {
      dataset: def.name,
      filters,
      period,
      limit,
      cursor,
      release,
      asOf: asOfMeta?.asked,
      format,
      options: keyParts(FINANCIALS.options, values),
      meta: (rowCount) => ({
        dataset: def.name,
        metric: def.name,
        filters_applied: applied,
        row_count: rowCount,
        ...(asOfMeta && { as_of: asOfMeta }),
      }),
    });
  },
  operation: financialsOperation(FINANCIALS),
  schemas: FINANCIALS_SCHEMAS,
};
