import type { CatalogAnswer, CatalogEntry } from 'data-query-client';

// An aggregate adds a metric's values within one unit (ggr within one currency, `fx`):
// a view of a dataset whose every metric is in mixed units, with neither a filter nor a
// grouping on the unit's dimension, would be the 400 `mixed_units`. The page picks the
// catalog's first value of that dimension for it (USD for `fx`), and says so.

/**
 * The dimension an aggregate view of `dataset` must read one value of (`fx`): that of
 * every metric it asks for, when they are all in mixed units alike (one left to add up
 * answers) and the view does not group by it.
 */
export function unitDimension(dataset: CatalogEntry, params: URLSearchParams): string | undefined {
  const units = dataset.units_from ?? {};
  const measured = params.getAll('measure').flatMap((m) => m.split(',').map((x) => x.split(':')[0]!));
  const metrics = measured.length ? measured : dataset.metrics;
  const dimensions = new Set(metrics.map((m) => units[m]));
  if (dimensions.size !== 1) return undefined;
  const [dimension] = dimensions;
  const grouped = params.getAll('group_by').flatMap((g) => g.split(','));
  return dimension && !grouped.includes(dimension) ? dimension : undefined;
}

/** The filter an aggregate view of `dataset` needs to answer, as [dimension, value], or undefined when it needs none. */
export function unitDefault(catalog: CatalogAnswer, dataset: CatalogEntry, params: URLSearchParams): [string, string] | undefined {
  const dimension = unitDimension(dataset, params);
  if (!dimension || params.has(dimension)) return undefined;
  const first = Object.keys(catalog.dimensions[dimension]?.values ?? {})[0];
  return first === undefined ? undefined : [dimension, first];
}
