import type { CatalogEntry, FacetsAnswer, Metric } from 'data-query-client';
import { getJson } from './api.ts';

// Which years of a dataset are projections: /v1/facets with `temporal=Forecast` lists
// the years that hold forecast rows (a facet's counts apply every other filter), so the
// page learns them from the release itself rather than from a year written down here.
// One URL per dataset and release, which api.ts's store keeps: asked once in the page's
// life. A failure is not kept, and leaves the chart unmarked rather than the view unanswered.

/** The `temporal` value of a projected year (the registry's, as the catalog lists it). */
export const FORECAST = 'Forecast';

/** The forecast years of the release a view reads: its `release`, or the one its `as_of` names. */
export async function forecastYears(dataset: CatalogEntry, params: URLSearchParams): Promise<ReadonlySet<number>> {
  if (!dataset.dimensions.includes('temporal') || !dataset.dimensions.includes('year')) return new Set();
  const query = new URLSearchParams({ metric: dataset.name, temporal: FORECAST });
  for (const name of ['release', 'as_of']) {
    const value = params.get(name);
    if (value) query.set(name, value);
  }
  try {
    const answer = await getJson<FacetsAnswer<Metric>>(`/v1/facets?${query}`);
    return new Set((answer.data as Record<string, readonly { value: unknown }[]>).year?.map((v) => Number(v.value)));
  } catch {
    return new Set();
  }
}

/** `2025–2030` for a run of years, `2025, 2027` otherwise. */
export function yearSpan(years: readonly number[]): string {
  const sorted = [...years].sort((a, b) => a - b);
  const run = sorted.every((y, i) => i === 0 || y === sorted[i - 1]! + 1);
  return run && sorted.length > 2 ? `${sorted[0]}–${sorted.at(-1)}` : sorted.join(', ');
}
