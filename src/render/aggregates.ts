import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { Dictionary } from '../store/column-store.ts';
import { jsonNumber, type TableColumn, type TablePage } from './table.ts';

/** An aggregate's groups, as src/query/aggregate.ts computes them. */
export interface GroupedRows {
  /** Dictionary codes of each group, `width` per group; -1 where a rollup row totals a dimension. */
  readonly codes: Int32Array;
  readonly width: number;
  /** Each group's values, one per key of the answer (measures and their derived keys); NaN for null. */
  readonly values: Float64Array;
  /** By index into `values`: a sum's exact decimal, printed in JSON and CSV instead of its double's digits. */
  readonly exact: ReadonlyMap<number, string>;
  /** Served rows in each group. */
  readonly rows: Float64Array;
}

/** Rows `start` to `end` (exclusive) of an aggregate's result, and what names their columns. */
export interface AggregatePage {
  readonly plan: { readonly groupBy: readonly string[]; readonly columns: readonly { readonly key: string }[] };
  readonly result: GroupedRows;
  /** The dictionary of each group_by dimension, in group_by order. */
  readonly dictionaries: readonly Dictionary[];
  readonly start: number;
  readonly end: number;
}

/**
 * A page of groups as a table: JSON `{dimensions, values}` rows; CSV and Arrow columns
 * the group_by dimensions, the value keys (each measure, then its derived keys), then
 * `rows`: the same keys in the same order in every format. A rolled-up dimension is
 * null (JSON null, an empty CSV field, an Arrow null); so is a sum too large for a
 * double, and a derived value that has none (no previous year, no denominator).
 */
export function aggregateTable({ plan, result, dictionaries, start, end }: AggregatePage): TablePage {
  const n = plan.columns.length;
  const code = (g: number, i: number) => result.codes[g * result.width + i]!;
  const dimensions: TableColumn[] = plan.groupBy.map((name, i) => ({
    name,
    type: INTEGER_DIMENSIONS.has(name) ? 'integer' : 'text',
    value: (g) => (code(g, i) < 0 ? null : dictionaries[i]!.values[code(g, i)]!),
  }));
  const measures: TableColumn[] = plan.columns.map((column, k) => ({
    name: column.key,
    type: 'double',
    value: (g) => {
      const x = result.values[g * n + k]!;
      return Number.isFinite(x) ? x : null;
    },
    text: (g) => result.exact.get(g * n + k),
  }));
  const rows: TableColumn = { name: 'rows', type: 'integer', value: (g) => result.rows[g]! };
  const dimensionKeys = plan.groupBy.map((d) => `${JSON.stringify(d)}:`);
  const valueKeys = [...plan.columns.map((c) => c.key), 'rows'].map((k) => `${JSON.stringify(k)}:`);
  return {
    columns: [...dimensions, ...measures, rows],
    start,
    end,
    json: (g) => {
      const groups = dictionaries.map((dictionary, i) => dimensionKeys[i]! + (code(g, i) < 0 ? 'null' : dictionary.json[code(g, i)]!));
      const values = plan.columns.map(
        (_, k) => valueKeys[k]! + (result.exact.get(g * n + k) ?? jsonNumber(result.values[g * n + k]!) ?? 'null'),
      );
      values.push(valueKeys.at(-1)! + result.rows[g]!);
      return `{"dimensions":{${groups.join(',')}},"values":{${values.join(',')}}}`;
    },
  };
}
