import type { Flat } from './table.ts';

// What the chart draws, from the table's rows: lines over `year` when year is a
// column, one per combination of the other dimensions (the 10 largest; the rest summed
// into "other"); otherwise one bar per row.

export const MAX_LINES = 10;

export interface Series {
  readonly label: string;
  readonly values: readonly (number | null)[];
}

export interface ChartData {
  readonly kind: 'line' | 'bar';
  /** Years (line) or row labels (bar), one per x position. */
  readonly x: readonly (number | string)[];
  readonly series: readonly Series[];
  /** Line: whether each x position is a forecast year (rows of `temporal=Forecast`). */
  readonly forecast: readonly boolean[];
}

/** The columns a chart can draw: numbers that are not dimensions (derived keys included). */
export const measures = (flat: Flat, dimensions: ReadonlySet<string>) =>
  flat.columns.filter((c, i) => !dimensions.has(c) && flat.rows.some((r) => typeof r[i] === 'number'));

export function chartData(flat: Flat, dimensions: ReadonlySet<string>, measure: string, forecast: ReadonlySet<number>): ChartData {
  const m = flat.columns.indexOf(measure);
  const yearAt = flat.columns.indexOf('year');
  const others = flat.columns.map((c, i) => (dimensions.has(c) && c !== 'year' ? i : -1)).filter((i) => i >= 0);
  const labelOf = (row: readonly unknown[]) => others.map((i) => (row[i] === null ? 'all' : String(row[i]))).join(' · ') || measure;
  if (yearAt < 0) {
    const labels = flat.rows.map((r) => labelOf(r));
    return { kind: 'bar', x: labels, series: [{ label: measure, values: flat.rows.map((r) => num(r[m])) }], forecast: [] };
  }
  const years = [...new Set(flat.rows.map((r) => r[yearAt]).filter((y): y is number => typeof y === 'number'))].sort((a, b) => a - b);
  const byLabel = new Map<string, (number | null)[]>();
  for (const row of flat.rows) {
    const year = row[yearAt];
    if (typeof year !== 'number') continue; // a rollup's subtotal over years is no point on a line
    const label = labelOf(row);
    const line = byLabel.get(label) ?? years.map(() => null);
    line[years.indexOf(year)] = num(row[m]);
    byLabel.set(label, line);
  }
  const size = (values: readonly (number | null)[]) => values.reduce<number>((s, v) => s + Math.abs(v ?? 0), 0);
  const ranked = [...byLabel].sort((a, b) => size(b[1]) - size(a[1]) || a[0].localeCompare(b[0]));
  const series: Series[] = ranked.slice(0, MAX_LINES).map(([label, values]) => ({ label, values }));
  const rest = ranked.slice(MAX_LINES);
  if (rest.length) {
    const other = years.map((_, i) => {
      const held = rest.map(([, v]) => v[i]).filter((v): v is number => v !== null && v !== undefined);
      return held.length ? held.reduce((s, v) => s + v, 0) : null;
    });
    series.push({ label: `other (${rest.length})`, values: other });
  }
  return { kind: 'line', x: years, series, forecast: years.map((y) => forecast.has(y)) };
}

/** What a key's values are in: a fraction (0.05 for 5%), the measure's own unit (its currency), or another (an index, a count of rows). */
export type KeyUnit = 'fraction' | 'measure' | 'other';

/**
 * A key's unit as the catalog's `derived` states it for the suffix the key ends in: one
 * whose meaning calls it a fraction, one "in the measure's unit", or another; a key
 * ending in no suffix is a measure itself (`rows` aside: a count). A wide key's `_<year>`
 * is the long key's, so it is taken off first.
 */
export function keyUnit(key: string, derived: Readonly<Record<string, string>>): KeyUnit {
  const long = key.replace(/_\d{4}$/, '');
  if (long === 'rows') return 'other';
  const means = Object.entries(derived).find(
    ([suffix]) => suffix.replace(/<[a-z]+>/g, '') !== '_' && suffixPattern(suffix).test(long),
  )?.[1];
  if (means === undefined || /the measure's unit/.test(means)) return 'measure';
  return /\bfraction\b/.test(means) ? 'fraction' : 'other';
}

/** `_per_<metric>` as a pattern: a placeholder stands for any key text. */
const suffixPattern = (suffix: string) =>
  new RegExp(`${suffix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/<[a-z]+>/g, '[a-z0-9_]+')}$`);

/** The chart's title: the measure, what it is drawn by (year, group, release), and its unit: `%` for a fraction, else the one currency filtered on. */
export function chartTitle(measure: string, by: string, unit: KeyUnit, currencies: readonly string[]): string {
  const shown = unit === 'fraction' ? '%' : unit === 'measure' && currencies.length === 1 ? currencies[0] : undefined;
  return `${measure} by ${by}${shown ? ` (${shown})` : ''}`;
}

export const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
