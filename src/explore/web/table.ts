import { h } from './dom.ts';

// An answer's rows as a table: the chart's text alternative, and what the snippets'
// rows are compared with. Columns are flat, as the CSV of the same request has them:
// the dimensions, then the values (`before_<metric>`, `after_<metric>` on revisions).

export type Cell = string | number | boolean | null;
export interface Flat {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly Cell[])[];
}

/** The groups a row may hold as null (a removed row's `values`, an added row's `before`): their columns are empty there, not a column of their own. */
const NULLABLE_GROUPS = new Set(['values', 'before', 'after']);

/** Rows of `{dimensions, values}` (or `before`/`after`) flattened to named columns. */
export function flatten(data: readonly Record<string, unknown>[]): Flat {
  const columns: string[] = [];
  const seen = new Set<string>();
  const records = data.map((row) => {
    const out: Record<string, Cell> = {};
    for (const [key, value] of Object.entries(row)) {
      if (value === null && NULLABLE_GROUPS.has(key)) continue;
      if (value && typeof value === 'object') {
        const prefix = key === 'dimensions' || key === 'values' ? '' : `${key}_`;
        for (const [inner, v] of Object.entries(value)) out[prefix + inner] = v as Cell;
      } else out[key] = value as Cell;
    }
    for (const key of Object.keys(out))
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    return out;
  });
  return { columns, rows: records.map((r) => columns.map((c) => r[c] ?? null)) };
}

const NUMBER = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });
const SMALL = new Intl.NumberFormat('en', { maximumSignificantDigits: 4 });

/** A number as read: grouped thousands, two decimals (four significant digits below 1, for shares and ratios). */
export const readable = (n: number) => (Math.abs(n) < 1 && n !== 0 ? SMALL : NUMBER).format(n);

/** Decimals beyond which a column's digits say nothing a reader compares. */
const MAX_DECIMALS = 6;

/**
 * The decimals of a column, one for all its values so they line up: none when every value
 * is whole; else at least two (money reads in cents), and as many as give the column's
 * largest value four significant digits (shares of 0.1234 and 0.0741 read in four).
 */
export function columnDecimals(values: readonly Cell[]): number {
  const numbers = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (numbers.every(Number.isInteger)) return 0;
  const largest = numbers.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  return Math.min(MAX_DECIMALS, Math.max(2, 3 - Math.floor(Math.log10(largest))));
}

/**
 * A control on each row (a link to its history), in a last column of its own: it holds
 * no value, so a copy from the table leaves it out, and the chart never reads it.
 */
export interface RowAction {
  readonly header: string;
  /** The control of the row at this index of the table's rows, or null where the row has none. */
  readonly cell: (row: number) => Node | null;
}

export function renderTable(flat: Flat, caption: string, dimensions: ReadonlySet<string>, action?: RowAction): HTMLTableElement {
  const head = h(
    'tr',
    {},
    ...flat.columns.map((c) => h('th', { scope: 'col' }, c)),
    action && h('th', { scope: 'col', class: 'action' }, action.header),
  );
  const body = h('tbody');
  const formats = flat.columns.map((_, i) => {
    const decimals = columnDecimals(flat.rows.map((r) => r[i]!));
    return new Intl.NumberFormat('en', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
  });
  for (const [r, row] of flat.rows.entries()) {
    const tr = h('tr');
    row.forEach((value, i) => {
      const name = flat.columns[i]!;
      const text = value === null ? '' : String(value);
      // The first dimension names the row for a screen reader; numbers are shown in their column's decimals, the raw value kept.
      const cell = i === 0 && dimensions.has(name) ? h('th', { scope: 'row' }) : h('td', typeof value === 'number' ? { class: 'num' } : {});
      if (typeof value === 'number' && !dimensions.has(name)) {
        cell.textContent = formats[i]!.format(value);
        cell.title = text;
        cell.dataset.raw = text;
      } else cell.textContent = value === null ? '—' : text;
      tr.append(cell);
    });
    if (action) tr.append(h('td', { class: 'action' }, action.cell(r)));
    body.append(tr);
  }
  const table = h('table', { class: 'answer' }, h('caption', {}, caption), h('thead', {}, head), body);
  table.addEventListener('copy', (event) => copyRaw(event, table));
  return table;
}

/** A copy from the table carries the raw values, tab-separated, not the rounded text shown. */
function copyRaw(event: ClipboardEvent, table: HTMLTableElement): void {
  const selection = getSelection();
  if (!selection || selection.isCollapsed || !event.clipboardData) return;
  const lines: string[] = [];
  for (const tr of table.querySelectorAll('tr')) {
    const cells = [...tr.children].filter((cell) => !cell.classList.contains('action') && selection.containsNode(cell, true));
    if (cells.length) lines.push(cells.map((cell) => (cell as HTMLElement).dataset.raw ?? cell.textContent ?? '').join('\t'));
  }
  event.clipboardData.setData('text/plain', lines.join('\n'));
  event.preventDefault();
}
