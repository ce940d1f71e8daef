import type { CatalogEntry } from 'data-query-client';
import type { Endpoint } from '../views.ts';
import { h } from './dom.ts';
import type { Flat, RowAction } from './table.ts';
import { pageUrl } from './url-state.ts';

// A row that is one observation (a financials row, a diff's, a history's) links to that
// observation's history: /explore/history with the dataset and each of the row's
// dimension values, `year` included, as a filter, which /v1/history reads as exactly
// that observation. A real page URL: it opens in a new tab, and Back returns here.

/** The views whose every row is one observation: an aggregate's rows are groups, a reference row no financial figure. */
const OBSERVATION_ROWS: ReadonlySet<Endpoint> = new Set(['financials', 'revisions', 'history']);

/** The history link of each row of `flat`, or undefined where its rows are not observations, or are one already shown whole. */
export function rowHistory(endpoint: Endpoint, dataset: CatalogEntry, flat: Flat): RowAction | undefined {
  const at = dataset.dimensions.map((d) => flat.columns.indexOf(d));
  if (!OBSERVATION_ROWS.has(endpoint) || !flat.rows.length || at.some((i) => i < 0)) return undefined;
  // A history of one observation is that row's history already.
  if (endpoint === 'history' && new Set(flat.rows.map((row) => JSON.stringify(at.map((i) => row[i])))).size < 2) return undefined;
  // Named by the values that tell the table's rows apart, and its year: each link's name is its own, and short.
  const telling = at.filter((i) => flat.columns[i] === 'year' || new Set(flat.rows.map((row) => row[i])).size > 1);
  return {
    header: 'History',
    cell: (r) => {
      const row = flat.rows[r]!;
      // A dimension without a value cannot be asked for as a filter: no link that would name other observations.
      if (at.some((i) => row[i] === null)) return null;
      const query = new URLSearchParams({ metric: dataset.name });
      for (const i of at) query.append(flat.columns[i]!, String(row[i]));
      const name = telling.map((i) => (row[i] === '' ? `${flat.columns[i]} (empty)` : String(row[i]))).join(', ');
      return h(
        'a',
        // An id of its own, so focus comes back to it when Back shows this view again (focus-keeper.ts).
        { href: pageUrl('history', query), id: `history-of-${endpoint}-${r}` },
        'History',
        h('span', { class: 'visually-hidden' }, ` of ${dataset.name} ${name}`),
      );
    },
  };
}
