import { Float64, Int32, Table, Utf8, tableToIPC, vectorFromArray, type DataType, type Vector } from 'apache-arrow';
import { INTEGER_DIMENSIONS, type DatasetDef } from '../registry.ts';
import { CHANGES, type RevisionResult } from '../query/revisions.ts';
import { csvField } from '../store/csv-renderer.ts';
import { formatDouble } from '../store/json-number.ts';
import type { Format, PageEnvelope } from './formats.ts';

/** Rows `start` to `end` (exclusive) of a kept revisions diff. */
export interface RevisionPage {
  readonly def: DatasetDef;
  readonly result: RevisionResult;
  readonly start: number;
  readonly end: number;
}

/**
 * A page of revised rows: JSON `{dimensions, change, before, after}` rows in the
 * envelope (`before` null for an added row, `after` null for a removed one); CSV and
 * Arrow as flat columns: the dimensions, `change`, then `before_<metric>` and
 * `after_<metric>` for each metric, empty or null where the row is absent.
 */
export function renderRevisions(format: Format['name'], page: RevisionPage, envelope: PageEnvelope): Buffer {
  if (format === 'csv') return Buffer.from(csv(page));
  if (format === 'arrow') return Buffer.from(tableToIPC(arrowTable(page), 'stream'));
  return Buffer.from(`{"meta":${JSON.stringify(envelope.meta)},"data":[${jsonRows(page)}],"pagination":${JSON.stringify(envelope.pagination)}}`);
}

/** The flat column names, as CSV and Arrow carry them. */
export const revisionColumns = (def: DatasetDef) => [...def.dimensions, 'change', ...def.metrics.map((m) => `before_${m}`), ...def.metrics.map((m) => `after_${m}`)];

function jsonRows({ def, result, start, end }: RevisionPage): string {
  const dimensionKeys = def.dimensions.map((d) => `${JSON.stringify(d)}:`);
  const metricKeys = def.metrics.map((m) => `${JSON.stringify(m)}:`);
  // A side the row is absent from is NaN in every metric (metrics are never null in a release).
  const values = (columns: readonly Float64Array[], r: number) =>
    Number.isNaN(columns[0]![r]) ? 'null' : `{${columns.map((column, m) => metricKeys[m]! + formatDouble(column[r]!)).join(',')}}`;
  const rows: string[] = [];
  for (let r = start; r < end; r++) {
    const dimensions = result.dimensions.map((dimension, d) => dimensionKeys[d]! + dimension.json[dimension.codes[r]!]!);
    rows.push(`{"dimensions":{${dimensions.join(',')}},"change":"${CHANGES[result.change[r]!]}","before":${values(result.before, r)},"after":${values(result.after, r)}}`);
  }
  return rows.join(',');
}

function csv({ def, result, start, end }: RevisionPage): string {
  const lines = [revisionColumns(def).map(csvField).join(',')];
  const number = (x: number) => (Number.isNaN(x) ? '' : formatDouble(x));
  for (let r = start; r < end; r++) {
    const fields = result.dimensions.map((dimension) => csvField(dimension.values[dimension.codes[r]!]!));
    fields.push(CHANGES[result.change[r]!]!);
    for (const column of [...result.before, ...result.after]) fields.push(number(column[r]!));
    lines.push(fields.join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

function arrowTable({ def, result, start, end }: RevisionPage): Table {
  const column = <T extends DataType>(type: T, value: (r: number) => unknown): Vector<T> =>
    vectorFromArray(Array.from({ length: end - start }, (_, i) => value(start + i)), type) as Vector<T>;
  const columns: Record<string, Vector> = {};
  result.dimensions.forEach((dimension) => {
    const at = (r: number) => dimension.values[dimension.codes[r]!];
    columns[dimension.name] = INTEGER_DIMENSIONS.has(dimension.name) ? column(new Int32(), at) : column(new Utf8(), at);
  });
  columns.change = column(new Utf8(), (r) => CHANGES[result.change[r]!]);
  const metric = (values: Float64Array) => column(new Float64(), (r) => (Number.isNaN(values[r]!) ? null : values[r]));
  def.metrics.forEach((m, i) => (columns[`before_${m}`] = metric(result.before[i]!)));
  def.metrics.forEach((m, i) => (columns[`after_${m}`] = metric(result.after[i]!)));
  return new Table(columns);
}
