import { type ColumnRows, columnValue, type RowsColumn } from './columns.ts';
import { jsonNumber, type TableColumn, type TablePage } from './table.ts';

/**
 * A column of a history's rows, as src/query/history.ts keeps them: a dimension, a value (a metric, or in the wide shape
 * a metric in one release), or a field: a release (kept as its ordinal) or a change
 * (kept as its code).
 */
export interface HistoryColumn {
  readonly name: string;
  readonly role: 'dimension' | 'value' | 'release' | 'change';
  readonly type: 'text' | 'integer' | 'double';
}

/** Rows of a history in `columns`' order: dimensions, releases and changes as codes into their values, values as doubles. */
export interface HistoryRows extends ColumnRows {
  readonly columns: ReadonlyArray<RowsColumn & Pick<HistoryColumn, 'role'>>;
}

/**
 * Rows of a history as a table: CSV and Arrow columns as the history keeps them (the
 * dimensions, its release fields, its values), null where there is no value; JSON
 * `{dimensions, <release fields>, values}` rows, `values` null on a `removed` row.
 */
export function historyTable(rows: HistoryRows): TablePage {
  const columns = rows.columns.map(
    (column): TableColumn => ({ name: column.name, type: column.type, value: (r) => columnValue(column, r) }),
  );
  const key = (name: string) => `${JSON.stringify(name)}:`;
  // An integer column (year) is written as an integer, a double as the other endpoints write doubles.
  const text = (value: string | number | null, type: HistoryColumn['type']) =>
    typeof value !== 'number' ? JSON.stringify(value) : type === 'integer' ? String(value) : (jsonNumber(value) ?? 'null');
  const at = (role: string) =>
    rows.columns.flatMap((column, c) => (column.role === role ? [{ key: key(column.name), c, type: column.type }] : []));
  const dimensions = at('dimension');
  const fields = [...at('change'), ...at('release')].sort((a, b) => a.c - b.c);
  const values = at('value');
  const change = rows.columns.findIndex((column) => column.role === 'change');
  const value = (c: number, r: number) => columns[c]!.value(r);
  return {
    columns,
    start: 0,
    end: rows.count,
    json: (r) => {
      const of = (list: typeof values) => list.map(({ key, c, type }) => key + text(value(c, r), type)).join(',');
      const removed = change >= 0 && value(change, r) === 'removed';
      const fieldText = fields.map(({ key, c, type }) => `,${key}${text(value(c, r), type)}`).join('');
      return `{"dimensions":{${of(dimensions)}}${fieldText},"values":${removed ? 'null' : `{${of(values)}}`}}`;
    },
  };
}
