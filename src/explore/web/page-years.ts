import type { Flat } from './table.ts';

// A page of rows in year order (financials: year is each dataset's first dimension, and
// rows come in dimension order) is cut wherever its size falls: its first year may begin
// on the page before, its last go on in the next. Charted as they are, those years would
// read as whole years that fell; a chart of the page draws the years it holds whole.

export interface PageYears {
  /** The page's rows of the years it holds whole. */
  readonly flat: Flat;
  /** Those years, ascending. */
  readonly whole: readonly number[];
  /** The years at the page's edges that another page holds part of. */
  readonly cut: readonly number[];
}

/**
 * The page's whole years, given whether a page comes before it and after it; undefined
 * when the page is the whole view or its rows are not in year order.
 */
export function pageYears(flat: Flat, before: boolean, after: boolean): PageYears | undefined {
  if (flat.columns[0] !== 'year' || !flat.rows.length || (!before && !after)) return undefined;
  const edges = new Set([before ? flat.rows[0]![0] : undefined, after ? flat.rows.at(-1)![0] : undefined]);
  edges.delete(undefined);
  const rows = flat.rows.filter((r) => !edges.has(r[0]));
  return {
    flat: { columns: flat.columns, rows },
    whole: [...new Set(rows.map((r) => r[0] as number))],
    cut: [...edges] as number[],
  };
}
