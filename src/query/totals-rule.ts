import { InvalidGroupByError, MixedTotalsError } from '../errors/index.ts';
import type { DatasetDef, TotalsDef } from '../registry.ts';
import type { Filters } from './filters.ts';

// The national-totals rule of aggregates (docs/api.md "Aggregates"): rows that total
// others (national rows, state "") and the rows they total are never added together.
// /v1/aggregate reads with it, and /v1/facets counts with it for an aggregate view
// (endpoint=aggregate), so the counts beside the filters are the rows the view adds up.

/** Refuses a group_by dimension the dataset does not have. */
export function checkGroupBy(def: DatasetDef, groupBy: readonly string[]): void {
  for (const dimension of groupBy) {
    if (!def.dimensions.includes(dimension)) throw new InvalidGroupByError(dimension, def.name, def.dimensions);
  }
}

/** The totals rows read alone under `groupBy` and `filters`, or undefined when the rule adds no filter. */
export function impliedTotals(def: DatasetDef, groupBy: readonly string[], filters: Filters): TotalsDef | undefined {
  const totals = def.totals;
  if (!totals || groupBy.includes(totals.dimension) || filters.has(totals.dimension)) return undefined;
  return totals;
}

/**
 * The filters to aggregate with: without a filter or a grouping on the totals'
 * dimension only the totals are read; a filter that mixes both is refused.
 */
export function totalsFilters(def: DatasetDef, groupBy: readonly string[], filters: Filters): Filters {
  const implied = impliedTotals(def, groupBy, filters);
  if (implied) {
    const withTotals = new Map([...filters, [implied.dimension, [implied.value]]]);
    return new Map(def.dimensions.filter((d) => withTotals.has(d)).map((d) => [d, withTotals.get(d)!]));
  }
  const totals = def.totals;
  const given = totals && !groupBy.includes(totals.dimension) ? filters.get(totals.dimension) : undefined;
  if (totals && given?.includes(totals.value) && given.length > 1) {
    const shown = JSON.stringify(totals.value);
    throw new MixedTotalsError(
      `Cannot add ${totals.means} (${totals.dimension} ${shown}) to the rows they total: filter ${totals.dimension} to ${shown} alone or leave ${shown} out, or add ${totals.dimension} to group_by`,
    );
  }
  return filters;
}
