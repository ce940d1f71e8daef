import type { ColumnStore } from '../store/column-store.ts';
import type { TextSyntax } from './text-renderer.ts';

/**
 * A field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a
 * quote or a line break. An empty string is quoted too (`""`), so tools that tell
 * an empty value from a missing one read the empty `state` as a string.
 */
export function csvField(value: string | number): string {
  if (typeof value === 'number') return String(value);
  return value === '' || /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * Rows as RFC 4180 CSV (CRLF line ends): dimension columns in the dataset's order,
 * then metric columns, numbers printed exactly as the JSON body prints them; the
 * header line (csvHeader) comes first.
 */
export function csvSyntax(store: ColumnStore): TextSyntax {
  const last = store.segments.length - 1;
  const hasMetrics = store.metrics.length > 0;
  return {
    fragment: (s, values) =>
      (s > 0 ? ',' : '') +
      values.map(([column, code]) => csvField(column.dictionary.values[code]!)).join(',') +
      (s === last && hasMetrics ? ',' : ''),
    metricGlue: store.metrics.slice(1).map(() => ','),
    tail: '\r\n',
    separator: '',
  };
}

/** The header line: the column names. */
export const csvHeader = (store: ColumnStore) => `${[...store.dimensions, ...store.metrics].map((c) => csvField(c.name)).join(',')}\r\n`;
