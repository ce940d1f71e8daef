import { countFacets } from '../../query/facets.ts';
import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { FACETS } from '../../query/options/endpoints.ts';
import { dimensionFilters, filtersApplied } from '../../query/options/filter-values.ts';
import { keyParts } from '../../query/options/option.ts';
import { canonicalScope } from '../../query/scope.ts';
import { checkGroupBy, impliedTotals, totalsFilters } from '../../query/totals-rule.ts';
import { unmatchedValues } from '../../query/unmatched.ts';
import { FACETS_SCHEMAS, facetsOperation } from '../openapi/operations/facets.ts';
import { releaseNamed } from '../respond/as-of.ts';
import { respondCacheable } from '../respond/cacheable.ts';
import { heavyWork } from '../respond/heavy-work.ts';
import { withRelease } from '../respond/request-release.ts';
import type { Route } from './route.ts';

// GET /v1/facets: each dimension's values that have rows under the filters, with their
// row counts, every filter applied but the dimension's own (docs/api.md "Facets");
// with endpoint=aggregate, the rows an aggregate of that grouping reads.
// The counts are heavy work (one GROUP BY per dimension over the release's rows) and
// their answer is cached as any other.

export const facets: Route = {
  path: FACETS.path,
  endpoint: FACETS,
  async handle(ctx, services) {
    const values = parseOptions(FACETS, ctx.query);
    const { metric, period, endpoint, group_by: groupBy } = values;
    const { release: asked, asOf } = releaseNamed(ctx, services.releases, values);
    const def = financialDataset(metric);
    const requested = dimensionFilters(ctx.query, def, FACETS, values);
    // An aggregate view's counts are of the rows it adds up: the same rule, from the same code.
    if (endpoint === 'aggregate') checkGroupBy(def, groupBy);
    const totalsRule = endpoint === 'aggregate' ? impliedTotals(def, groupBy, requested) : undefined;
    const filters = endpoint === 'aggregate' ? totalsFilters(def, groupBy, requested) : requested;
    await withRelease(ctx, services, { release: asked }, async (release) => {
      const served = release.datasets.get(def.name)!;
      const max = services.facetValues;
      // group_by's part (it gives none of its own): whether the rule applied, the one thing of it the counts depend on.
      const options = [
        ...keyParts(FACETS.options, values),
        ...(totalsRule ? [['totals_rule', totalsRule.dimension] as [string, unknown]] : []),
      ];
      const scope = canonicalScope({ release: release.id, dataset: def.name, filters, period: period?.text, asOf: asOf?.asked, options });
      const render = async () => {
        const counted = await heavyWork(ctx, services, 'facets', (signal) =>
          countFacets(services.db, served, filters, period?.years, max, signal),
        );
        const unmatched = unmatchedValues(served, filters);
        const meta = {
          dataset: def.name,
          metric: def.name,
          filters_applied: filtersApplied(filters, period),
          facet_values: max,
          values_left_out: counted.leftOut,
          release: release.id,
          ...(asOf && { as_of: asOf }),
          ...(totalsRule && { totals_rule: totalsRule }),
          ...(unmatched.length > 0 && { warnings: unmatched }),
        };
        return { body: Buffer.from(JSON.stringify({ data: counted.values, meta })) };
      };
      await respondCacheable(ctx, services, {
        key: JSON.stringify(['facets', max, ...scope]),
        contentType: 'application/json; charset=utf-8',
        render,
        release: release.id,
      });
    });
  },
  operation: facetsOperation(FACETS),
  schemas: FACETS_SCHEMAS,
};
