import { type ChartData, num } from './chart-data.ts';
import type { Flat } from './table.ts';

// A history of one observation is drawn as its value release after release, the line a
// revision is read off. Of several observations, of first values (one point each) or in
// the wide shape (one row, its releases across), there is no chart: the table says it.

/** Why a history has no chart, said where the chart would be. */
export const NO_RELEASE_CHART =
  "No chart: a history is drawn for one observation, with output=changes or output=all in the long shape, as its value in each release. A row's History link in a financials view opens one.";

/**
 * The value of `measure` in each of `releases` (a history's `meta.releases`), from its
 * rows, or undefined when they are not one observation's changes or long vintages.
 */
export function releaseChart(
  flat: Flat,
  dimensions: readonly string[],
  releases: readonly string[],
  measure: string,
): ChartData | undefined {
  const col = (name: string) => flat.columns.indexOf(name);
  const [value, release, from, change] = [col(measure), col('release'), col('valid_from'), col('change')];
  const at = dimensions.map(col);
  const observations = new Set(flat.rows.map((row) => JSON.stringify(at.map((i) => row[i]))));
  if (value < 0 || observations.size !== 1) return undefined;
  let values: (number | null)[];
  if (release >= 0) values = releases.map((r) => num(flat.rows.find((row) => row[release] === r)?.[value]));
  else if (from >= 0 && change >= 0) {
    // Validity is never clipped: a version published before the range and valid in it starts the line.
    let held: number | null = null;
    for (const row of flat.rows) if (!releases.includes(String(row[from]))) held = num(row[value]);
    values = releases.map((r) => {
      const row = flat.rows.find((each) => each[from] === r);
      if (row) held = row[change] === 'removed' ? null : num(row[value]);
      return held;
    });
  } else return undefined;
  return { kind: 'line', x: releases, series: [{ label: measure, values }], forecast: releases.map(() => false) };
}
