import { Float64, Int32, Table, Utf8, tableToIPC, vectorFromArray, type DataType, type Vector } from 'apache-arrow';
import { INTEGER_DIMENSIONS } from '../registry.ts';
import type { AggregatePlan, AggregateResult } from '../query/aggregate.ts';
import type { Dictionary } from '../store/column-store.ts';
import { csvField } from '../store/csv-renderer.ts';
import { formatDouble } from '../store/json-number.ts';
import type { Format, PageEnvelope } from './formats.ts';

/** Rows `start` to `end` (exclusive) of an aggregate's result, and what names their columns. */
export interface AggregatePage {
  readonly plan: AggregatePlan;
  readonly result: AggregateResult;
  /** The dictionary of each group_by dimension, in group_by order. */
  readonly dictionaries: readonly Dictionary[];
  readonly start: number;
  readonly end: number;
}

/**
 * A page of groups in each format: JSON `{dimensions, values}` rows in the
 * envelope; CSV and Arrow as flat columns (the group_by dimensions, the measure
 * keys, then `rows`). A rolled-up dimension is JSON null, an empty CSV field (an
 * empty string value is `""`), or an Arrow null. Values print as the financial rows
 * print theirs; a sum too large for a double is null.
 */
export function renderAggregate(format: Format['name'], page: AggregatePage, envelope: PageEnvelope): Buffer {
  if (format === 'csv') return Buffer.from(csv(page));
  if (format === 'arrow') return Buffer.from(tableToIPC(arrowTable(page), 'stream'));
  return Buffer.from(`{"meta":${JSON.stringify(envelope.meta)},"data":[${jsonRows(page)}],"pagination":${JSON.stringify(envelope.pagination)}}`);
}

const number = (x: number) => (Number.isFinite(x) ? formatDouble(x) : null);

function jsonRows({ plan, result, dictionaries, start, end }: AggregatePage): string {
  const dimensionKeys = plan.groupBy.map((d) => `${JSON.stringify(d)}:`);
  const valueKeys = [...plan.measures.map((m) => m.key), 'rows'].map((k) => `${JSON.stringify(k)}:`);
  const rows: string[] = [];
  for (let g = start; g < end; g++) {
    const dimensions = dictionaries.map((dictionary, i) => {
      const code = result.codes[g * result.width + i]!;
      return dimensionKeys[i]! + (code < 0 ? 'null' : dictionary.json[code]!);
    });
    const values = plan.measures.map((_, k) => valueKeys[k] + (number(result.values[g * plan.measures.length + k]!) ?? 'null'));
    values.push(valueKeys.at(-1)! + result.rows[g]!);
    rows.push(`{"dimensions":{${dimensions.join(',')}},"values":{${values.join(',')}}}`);
  }
  return rows.join(',');
}

function csv({ plan, result, dictionaries, start, end }: AggregatePage): string {
  const lines = [[...plan.groupBy, ...plan.measures.map((m) => m.key), 'rows'].map(csvField).join(',')];
  for (let g = start; g < end; g++) {
    const fields = dictionaries.map((dictionary, i) => {
      const code = result.codes[g * result.width + i]!;
      return code < 0 ? '' : csvField(dictionary.values[code]!);
    });
    for (let k = 0; k < plan.measures.length; k++) fields.push(number(result.values[g * plan.measures.length + k]!) ?? '');
    fields.push(String(result.rows[g]!));
    lines.push(fields.join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

function arrowTable({ plan, result, dictionaries, start, end }: AggregatePage): Table {
  const column = <T extends DataType>(type: T, value: (g: number) => unknown): Vector<T> =>
    vectorFromArray(Array.from({ length: end - start }, (_, i) => value(start + i)), type) as Vector<T>;
  const columns: Record<string, Vector> = {};
  plan.groupBy.forEach((dimension, i) => {
    const at = (g: number) => {
      const code = result.codes[g * result.width + i]!;
      return code < 0 ? null : dictionaries[i]!.values[code];
    };
    columns[dimension] = INTEGER_DIMENSIONS.has(dimension) ? column(new Int32(), at) : column(new Utf8(), at);
  });
  plan.measures.forEach((measure, k) => {
    columns[measure.key] = column(new Float64(), (g) => {
      const x = result.values[g * plan.measures.length + k]!;
      return Number.isFinite(x) ? x : null;
    });
  });
  columns.rows = column(new Int32(), (g) => result.rows[g]);
  return new Table(columns);
}
