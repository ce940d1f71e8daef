import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import { type ColumnRows, type RowsColumn, streamColumns } from './columns.ts';
import { formatDouble } from './json-number.ts';
import type { TableColumn, TablePage } from './table.ts';

/** The rows of a revisions diff, as src/query/revisions.ts keeps them. */
export interface RevisedRows {
  readonly count: number;
  /** In the dataset's dimension order, each dictionary-coded; every batch of one diff shares the dictionaries (`values`). */
  readonly dimensions: ReadonlyArray<{
    readonly name: string;
    readonly values: readonly (string | number)[];
    readonly json: readonly string[];
    readonly codes: Uint32Array;
  }>;
  /** Each row's kind of change, an index into the page's `changes`. */
  readonly change: Uint8Array;
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
  const heads = revisionColumns(def);
  const side = (first: number, columns: readonly Float64Array[]) =>
    columns.map((column, i): TableColumn => ({ ...heads[first + i]!, value: (r) => (Number.isNaN(column[r]!) ? null : column[r]!) }));
  const dimensions = result.dimensions.map(
    (dimension, d): TableColumn => ({ ...heads[d]!, value: (r) => dimension.values[dimension.codes[r]!]! }),
  );
  const m = def.metrics.length;
  const d = def.dimensions.length;
  const change: TableColumn = { ...heads[d]!, value: (r) => changes[result.change[r]!]! };
  const dimensionKeys = def.dimensions.map((d) => `${JSON.stringify(d)}:`);
  const metricKeys = def.metrics.map((m) => `${JSON.stringify(m)}:`);
  // A side the row is absent from is NaN in every metric (metrics are never null in a release).
  const values = (columns: readonly Float64Array[], r: number) =>
    Number.isNaN(columns[0]![r]) ? 'null' : `{${columns.map((column, m) => metricKeys[m]! + formatDouble(column[r]!)).join(',')}}`;
  return {
    columns: [...dimensions, change, ...side(d + 1, result.before), ...side(d + 1 + m, result.after)],
    start,
    end,
    json: (r) => {
      const dims = result.dimensions.map((dimension, d) => dimensionKeys[d]! + dimension.json[dimension.codes[r]!]!);
      return `{"dimensions":{${dims.join(',')}},"change":"${changes[result.change[r]!]}","before":${values(result.before, r)},"after":${values(result.after, r)}}`;
    },
  };
}

/** A diff's columns, in CSV's and Arrow's order: the dimensions, `change`, `before_<metric>` each, `after_<metric>` each. */
function revisionColumns(def: DatasetDef): ReadonlyArray<Pick<TableColumn, 'name' | 'type'>> {
  return [
    ...def.dimensions.map((name) => ({ name, type: INTEGER_DIMENSIONS.has(name) ? ('integer' as const) : ('text' as const) })),
    { name: 'change', type: 'text' as const },
    ...['before', 'after'].flatMap((side) => def.metrics.map((m) => ({ name: `${side}_${m}`, type: 'double' as const }))),
  ];
}

/** A whole diff as one CSV file or one Arrow stream (render/columns.ts): its batches' columns, in revisionColumns' order. */
export function streamRevisions(
  format: 'csv' | 'arrow',
  def: DatasetDef,
  changes: readonly string[],
  batches: AsyncIterable<RevisedRows>,
): AsyncGenerator<Buffer> {
  const heads = revisionColumns(def);
  const d = def.dimensions.length;
  async function* columns(): AsyncGenerator<ColumnRows> {
    for await (const rows of batches) {
      const dimensions = rows.dimensions.map(
        ({ name, values, codes }, i): RowsColumn => ({ name, type: heads[i]!.type as 'text' | 'integer', values, codes }),
      );
      const change: RowsColumn = { name: heads[d]!.name, type: 'text', values: changes, codes: rows.change };
      const values = [...rows.before, ...rows.after].map(
        (doubles, i): RowsColumn => ({ name: heads[d + 1 + i]!.name, type: 'double', doubles }),
      );
      yield { count: rows.count, columns: [...dimensions, change, ...values] };
    }
  }
  return streamColumns(format, heads, columns());
}
