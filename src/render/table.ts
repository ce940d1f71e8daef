import { type DataType, Float64, Int32, Table, tableToIPC, Utf8, type Vector, vectorFromArray } from 'apache-arrow';
import { csvField } from './csv-syntax.ts';
import { envelopeAfter, envelopeBefore, type PageEnvelope } from './formats.ts';
import { formatDouble } from './json-number.ts';

// Computed results (an aggregate's groups, a revisions diff) as flat columns, which CSV
// and Arrow carry as they are, and as JSON rows of each result's own shape: one
// renderer per format for every such result.

export type TableFormat = 'json' | 'csv' | 'arrow';

export interface TableColumn {
  readonly name: string;
  /** Text (Utf8), an integer (Int32) or a double (Float64). */
  readonly type: 'text' | 'integer' | 'double';
  /** The value in row `r`; null where there is none (a rolled-up dimension, a side without the row, a sum beyond the largest double). */
  value(r: number): string | number | null;
  /** A double's exact decimal, where JSON and CSV print it instead of the double's own digits; Arrow carries the double. */
  text?(r: number): string | undefined;
}

/** Rows `start` to `end` (exclusive) of a result. */
export interface TablePage {
  readonly columns: readonly TableColumn[];
  readonly start: number;
  readonly end: number;
  /** Row `r` as the JSON object the page's `data` holds. */
  json(r: number): string;
}

/**
 * A page: JSON rows in the envelope; RFC 4180 CSV (a header row, CRLF line ends, an
 * empty field for null and `""` for an empty string); an Arrow IPC stream with null
 * where there is no value. Numbers print as the JSON rows print them.
 */
export function renderTable(format: TableFormat, page: TablePage, envelope: PageEnvelope): Buffer {
  if (format === 'csv') return Buffer.from(csv(page));
  if (format === 'arrow') return Buffer.from(tableToIPC(arrowTable(page), 'stream'));
  const rows: string[] = [];
  for (let r = page.start; r < page.end; r++) rows.push(page.json(r));
  return Buffer.from(envelopeBefore(envelope) + rows.join(',') + envelopeAfter(envelope));
}

/** A double as the JSON rows write it; null for one that is not finite. */
export const jsonNumber = (x: number): string | null => (Number.isFinite(x) ? formatDouble(x) : null);

function csvValue(value: string | number | null, type: TableColumn['type']): string {
  if (value === null) return '';
  if (type === 'double') return formatDouble(value as number);
  return csvField(value);
}

function csv({ columns, start, end }: TablePage): string {
  const lines = [columns.map((c) => csvField(c.name)).join(',')];
  for (let r = start; r < end; r++) lines.push(columns.map((c) => c.text?.(r) ?? csvValue(c.value(r), c.type)).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

const ARROW_TYPES = { text: () => new Utf8(), integer: () => new Int32(), double: () => new Float64() };

function arrowTable({ columns, start, end }: TablePage): Table {
  const vectors: Record<string, Vector> = {};
  for (const column of columns) {
    const values = Array.from({ length: end - start }, (_, i) => column.value(start + i));
    vectors[column.name] = vectorFromArray(values, ARROW_TYPES[column.type]() as DataType);
  }
  return new Table(vectors);
}
