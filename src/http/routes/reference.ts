import { unknownDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { REFERENCE } from '../../query/options/endpoints.ts';
import { keyParts } from '../../query/options/option.ts';
import { findDataset } from '../../registry.ts';
import { REFERENCE_SCHEMAS, referenceOperation } from '../openapi/operations/reference.ts';
import { releaseNamed } from '../respond/as-of.ts';
import { respondWithPage } from '../respond/paging.ts';
import type { Route } from './route.ts';

// GET /v1/reference: one keyset page of a reference dataset's rows (spec 2.3).

export const reference: Route = {
  path: REFERENCE.path,
  endpoint: REFERENCE,
  async handle(ctx, services) {
    const values = parseOptions(REFERENCE, ctx.query);
    const { dataset, limit, cursor, format } = values;
    const { release, asOf } = releaseNamed(ctx, services.releases, values);
    const def = findDataset(dataset, 'reference');
    if (!def) throw unknownDataset(dataset);
    await respondWithPage(ctx, services, {
      dataset: def.name,
      filters: new Map(),
      limit,
      cursor,
      release,
      asOf: asOf?.asked,
      format,
      options: keyParts(REFERENCE.options, values),
      meta: (rowCount) => ({ dataset: def.name, row_count: rowCount, ...(asOf && { as_of: asOf }) }),
    });
  },
  operation: referenceOperation(REFERENCE),
  schemas: REFERENCE_SCHEMAS,
};
