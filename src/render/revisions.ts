import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import { formatDouble } from './json-number.ts';
import type { TableColumn, TablePage } from './table.ts';

/** The rows of a revisions diff, as src/query/revisions.ts keeps them. */
export interface RevisedRows {
  /** In the dataset's dimension order, each dictionary-coded. */
  readonly dimensions: ReadonlyArray<{
    readonly name: string;
    readonly values: readonly (string | number)[];
    readonly json: readonly string[];
    readonly codes: ArrayLike<number>;
  }>;
  /** Each row's kind of change, an index into the page's `changes`. */
  readonly change: ArrayLike<number>;
  /** Per metric, the value before and after; NaN where the row is absent. */
  readonly before: readonly Float64Array[];
  readonly after: readonly Float64Array[];
}

/** Rows `start` to `end` (exclusive) of a kept revisions diff. */
export interface RevisionPage {
  readonly def: DatasetDef;
  readonly result: RevisedRows;
  /** The names of the kinds of change `result.change` indexes. */
  readonly changes: readonly string[];
  readonly start: number;
  readonly end: number;
}

/**
 * A page of revised rows as a table: JSON `{dimensions, change, before, after}` rows
 * (`before` null for an added row, `after` null for a removed one); CSV and Arrow
 * columns the dimensions, `change`, then `before_<metric>` and `after_<metric>` for
 * each metric, null where the row is absent.
 */
export function revisionTable({ def, result, changes, start, end }: RevisionPage): TablePage {
  const side = (prefix: string, columns: readonly Float64Array[]) =>
    def.metrics.map(
      (m, i): TableColumn => ({
        name: `${prefix}_${m}`,
        type: 'double',
        value: (r) => (Number.isNaN(columns[i]![r]!) ? null : columns[i]![r]!),
      }),
    );
  const dimensions = result.dimensions.map(
    (dimension): TableColumn => ({
      name: dimension.name,
      type: INTEGER_DIMENSIONS.has(dimension.name) ? 'integer' : 'text',
      value: (r) => dimension.values[dimension.codes[r]!]!,
    }),
  );
  const change: TableColumn = { name: 'change', type: 'text', value: (r) => changes[result.change[r]!]! };
  const dimensionKeys = def.dimensions.map((d) => `${JSON.stringify(d)}:`);
  const metricKeys = def.metrics.map((m) => `${JSON.stringify(m)}:`);
  // A side the row is absent from is NaN in every metric (metrics are never null in a release).
  const values = (columns: readonly Float64Array[], r: number) =>
    Number.isNaN(columns[0]![r]) ? 'null' : `{${columns.map((column, m) => metricKeys[m]! + formatDouble(column[r]!)).join(',')}}`;
  return {
    columns: [...dimensions, change, ...side('before', result.before), ...side('after', result.after)],
    start,
    end,
    json: (r) => {
      const dims = result.dimensions.map((dimension, d) => dimensionKeys[d]! + dimension.json[dimension.codes[r]!]!);
      return `{"dimensions":{${dims.join(',')}},"change":"${changes[result.change[r]!]}","before":${values(result.before, r)},"after":${values(result.after, r)}}`;
    },
  };
}
