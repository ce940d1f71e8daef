import { computeAggregate } from '../../query/aggregate.ts';
import { optionsMeta, planAggregate } from '../../query/aggregate-plan.ts';
import { checkGroupCount } from '../../query/group-count.ts';
import { AGGREGATE } from '../../query/options/aggregate.ts';
import { financialDataset } from '../../query/options/datasets.ts';
import { parseOptions } from '../../query/options/endpoint.ts';
import { dimensionFilters, filtersApplied } from '../../query/options/filter-values.ts';
import { keyParts } from '../../query/options/option.ts';
import { unmatchedValues } from '../../query/unmatched.ts';
import { aggregateTable } from '../../render/aggregates.ts';
import { PAGE_FORMATS } from '../../render/formats.ts';
import { collect, renderTable, streamTable } from '../../render/table.ts';
import { AGGREGATE_SCHEMAS, aggregateOperation } from '../openapi/operations/aggregate.ts';
import { releaseNamed } from '../respond/as-of.ts';
import { respondWithKeptPage } from '../respond/kept-page.ts';
import { responseFormat } from '../respond/negotiate.ts';
import { withRelease } from '../respond/request-release.ts';
import { setWarningsHeader } from '../respond/warnings-header.ts';
import type { Route } from './route.ts';

// GET /v1/aggregate: totals, averages, minima and maxima of a financial dataset's
// metrics over any filter, grouped by up to six dimensions (docs/api.md "Aggregates");
// its options are query/options/aggregate.ts's.

export const aggregate: Route = {
  path: AGGREGATE.path,
  endpoint: AGGREGATE,
  async handle(ctx, services) {
    const values = parseOptions(AGGREGATE, ctx.query);
    const { metric, period, limit, cursor, format: named } = values;
    const { release, asOf } = releaseNamed(ctx, services.releases, values);
    const def = financialDataset(metric, 'aggregate');
    const plan = planAggregate(def, values, dimensionFilters(ctx.query, def, AGGREGATE, values));
    const format = responseFormat(ctx.get('accept'), named, PAGE_FORMATS);
    ctx.vary('Accept');
    const parsed = cursor === undefined ? undefined : services.cursors.parse(cursor);
    const whole = format.name !== 'json' && ctx.query.limit === undefined;
    // Held while answering: the kept result needs no tables, but the rows are read from this release's store.
    await withRelease(ctx, services, { cursor: parsed, release }, async ({ id, datasets }) => {
      const served = datasets.get(def.name)!;
      setWarningsHeader(ctx, format.name, () => unmatchedValues(served, plan.filters));
      await respondWithKeptPage(ctx, services, {
        kind: 'aggregate',
        kept: services.aggregates,
        scope: {
          release: id,
          dataset: def.name,
          filters: plan.filters,
          period: period?.text,
          asOf: asOf?.asked,
          options: keyParts(AGGREGATE.options, values),
        },
        format,
        cursor: parsed,
        // CSV and Arrow without `limit` are every group, at most AGGREGATE_MAX_GROUPS (docs/api.md "Aggregates").
        limit: whole ? undefined : limit,
        releases: [id],
        // Refused for its size before any row is grouped.
        compute: async (signal) => {
          const grouping = { groupBy: plan.groupBy, rollup: plan.values.rollup, filters: plan.filters };
          await checkGroupCount(services.db, served, grouping, period?.years, services.aggregateMaxGroups, signal);
          const tablesOf = (name: string) => datasets.get(name)!.aggregates;
          return computeAggregate(def, served.aggregates, plan, period?.years, tablesOf, signal);
        },
        count: (result) => result.count,
        render: (result, { start, end, pagination }) => {
          const unmatched = result.count === 0 ? unmatchedValues(served, plan.filters) : [];
          const meta = {
            dataset: def.name,
            metric: def.name,
            group_by: plan.groupBy,
            measures: result.wide?.keys ?? plan.columns.map((c) => c.key),
            filters_applied: filtersApplied(plan.filters, period),
            ...(plan.omitted.length > 0 && { omitted: plan.omitted }),
            ...optionsMeta(def, plan, result),
            row_count: end - start,
            release: id,
            ...(asOf && { as_of: asOf }),
            ...(unmatched.length > 0 && { warnings: unmatched }),
          };
          // A wide answer's rows are the groups of the other dimensions, its columns each key per year.
          const shown = result.wide
            ? { groupBy: plan.groupBy.filter((d) => d !== 'year'), columns: result.wide.keys.map((key) => ({ key })) }
            : plan;
          const dictionaries = shown.groupBy.map((d) => served.aggregates.dictionaries[def.dimensions.indexOf(d)]!);
          const table = aggregateTable({ plan: shown, result, dictionaries, start, end });
          // Up to AGGREGATE_MAX_GROUPS rows: rendered in slices that take turns with the event loop.
          if (whole) return collect(streamTable(format.name as 'csv' | 'arrow', [table]));
          return renderTable(format.name, table, { meta, pagination });
        },
      });
    });
  },
  operation: aggregateOperation(AGGREGATE),
  schemas: AGGREGATE_SCHEMAS,
};
