import { type Data, Float64, Int32, makeData, Utf8 } from 'apache-arrow';
import { type DatasetDef, INTEGER_DIMENSIONS } from '../registry.ts';
import { SLICE, Turns } from '../store/slices.ts';
import { END_OF_STREAM } from './arrow-renderer.ts';
import { csvField } from './csv-syntax.ts';
import { formatDouble, MAX_DOUBLE_LENGTH, writeDouble } from './json-number.ts';
import { ArrowStreamParts, csvHeaderLine, type TableColumn, type TablePage } from './table.ts';

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

/**
 * A whole diff as one CSV file or one Arrow stream, the same bytes as streamTable
 * writes for its rows (test/whole-csv.test.ts). Every batch of the diff is coded
 * against the same dictionaries, so each value's text is encoded once, the first
 * time, and a row is copies of those bytes and its numbers, as an export's rows are
 * (render/text-renderer.ts). Rendered SLICE rows at a time, taking turns with the
 * event loop between slices.
 */
export async function* streamRevisions(
  format: 'csv' | 'arrow',
  def: DatasetDef,
  changes: readonly string[],
  batches: AsyncIterable<RevisedRows>,
): AsyncGenerator<Buffer> {
  const columns = revisionColumns(def);
  const arrow = format === 'arrow' ? new ArrowStreamParts(columns) : undefined;
  yield arrow ? arrow.start : Buffer.from(csvHeaderLine(columns));
  const turns = new Turns();
  let encoded: Encoded | undefined;
  for await (const rows of batches) {
    encoded ??= encode(rows, changes, format);
    for (let at = 0; at < rows.count; at += SLICE) {
      const to = Math.min(rows.count, at + SLICE);
      if (arrow) {
        // A column at a time: a whole batch of 4,096 rows was a step of tens of ms on a busy machine.
        const data: Data[] = [];
        for (const column of arrowColumns(def, encoded, rows, at, to)) {
          await turns.turn();
          data.push(column());
        }
        yield arrow.batch(data, to - at);
        continue;
      }
      for (let from = at; from < to; from += CSV_STEP) {
        await turns.turn();
        yield csvRows(encoded, rows, from, Math.min(to, from + CSV_STEP));
      }
    }
  }
  if (arrow) yield END_OF_STREAM;
}

/** CSV rows rendered in one step: a CSV's bytes do not depend on where its steps end, an Arrow stream's batches do (SLICE rows each). */
const CSV_STEP = SLICE / 4;

/** Values' bytes one after another: value `i` is bytes[offsets[i]] up to bytes[offsets[i + 1]]. */
interface Texts {
  readonly bytes: Uint8Array;
  readonly offsets: Int32Array;
  /** The longest value's length. */
  readonly longest: number;
}

function texts(list: readonly string[]): Texts {
  const encoded = list.map((text) => Buffer.from(text));
  const offsets = new Int32Array(encoded.length + 1);
  encoded.forEach((b, i) => {
    offsets[i + 1] = offsets[i]! + b.length;
  });
  const bytes = new Uint8Array(offsets[encoded.length]!);
  for (const [i, b] of encoded.entries()) bytes.set(b, offsets[i]!);
  return { bytes, offsets, longest: encoded.reduce((n, b) => Math.max(n, b.length), 0) };
}

/**
 * Copies value `code` of `texts` into `out` at `at` and returns the end: a few bytes,
 * for which a loop costs less than a call to Buffer.copy.
 */
function put({ bytes, offsets }: Texts, code: number, out: Buffer, at: number): number {
  const end = offsets[code + 1]!;
  for (let i = offsets[code]!; i < end; i++) out[at++] = bytes[i]!;
  return at;
}

/** Each dictionary value's bytes, and each kind of change's. */
interface Encoded {
  /** Per dimension: CSV's field and its comma, or Arrow's UTF-8, per code. */
  readonly dimensions: readonly Texts[];
  readonly changes: Texts;
  /** CSV only: the most bytes a row takes. */
  readonly maxRowBytes: number;
}

function encode(rows: RevisedRows, changes: readonly string[], format: 'csv' | 'arrow'): Encoded {
  const text = (value: string | number) => (format === 'csv' ? `${csvField(value)},` : String(value));
  const dimensions = rows.dimensions.map((d) => texts(d.values.map(text)));
  const encodedChanges = texts(changes.map((change) => (format === 'csv' ? csvField(change) : change)));
  const metrics = rows.before.length + rows.after.length;
  const maxRowBytes = dimensions.reduce((n, t) => n + t.longest, 0) + encodedChanges.longest + metrics * (1 + MAX_DOUBLE_LENGTH) + 2;
  return { dimensions, changes: encodedChanges, maxRowBytes };
}

const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Rows [from, to) as CSV lines, each ended by CRLF; an absent side's values are empty
 * fields. Rows are sorted by their dimensions, so a row mostly repeats the one before
 * it up to its last dimensions: that prefix is copied from the row before in one go.
 */
function csvRows(encoded: Encoded, rows: RevisedRows, from: number, to: number): Buffer {
  const out = Buffer.allocUnsafe((to - from) * encoded.maxRowBytes);
  const values = [...rows.before, ...rows.after];
  const codes = rows.dimensions.map((d) => d.codes);
  // Where the row before ends each dimension's field, from its start.
  const ends = new Int32Array(codes.length);
  let previous = 0;
  let at = 0;
  for (let r = from; r < to; r++) {
    const start = at;
    let same = 0;
    if (r > from) while (same < codes.length && codes[same]![r] === codes[same]![r - 1]) same++;
    if (same > 0) {
      out.copyWithin(at, previous, previous + ends[same - 1]!);
      at += ends[same - 1]!;
    }
    for (let d = same; d < codes.length; d++) {
      at = put(encoded.dimensions[d]!, codes[d]![r]!, out, at);
      ends[d] = at - start;
    }
    previous = start;
    at = put(encoded.changes, rows.change[r]!, out, at);
    for (const column of values) {
      out[at++] = COMMA;
      if (!Number.isNaN(column[r]!)) at = writeDouble(out, at, column[r]!);
    }
    out[at++] = CR;
    out[at++] = LF;
  }
  return out.subarray(0, at);
}

/**
 * Rows [from, to) as Arrow columns, each made when called: text as Utf8, integers as
 * Int32, values as Float64 with nulls where a side is absent.
 */
function arrowColumns(def: DatasetDef, encoded: Encoded, rows: RevisedRows, from: number, to: number): Array<() => Data> {
  const length = to - from;
  const dimensions = rows.dimensions.map((dimension, d) => (): Data => {
    const codes = dimension.codes.subarray(from, to);
    if (!INTEGER_DIMENSIONS.has(def.dimensions[d]!)) return utf8(encoded.dimensions[d]!, codes);
    const data = new Int32Array(length);
    for (let i = 0; i < length; i++) data[i] = dimension.values[codes[i]!] as number;
    return makeData({ type: new Int32(), length, nullCount: 0, data });
  });
  return [
    ...dimensions,
    () => utf8(encoded.changes, rows.change.subarray(from, to)),
    ...[...rows.before, ...rows.after].map((c) => () => float(c.subarray(from, to))),
  ];
}

/** The Utf8 column of value `code` of `values` for each of `codes`. */
function utf8(values: Texts, codes: Uint32Array | Uint8Array): Data {
  const valueOffsets = new Int32Array(codes.length + 1);
  const { offsets } = values;
  for (let i = 0; i < codes.length; i++) valueOffsets[i + 1] = valueOffsets[i]! + offsets[codes[i]! + 1]! - offsets[codes[i]!]!;
  // Not from Buffer's pool: apache-arrow reads the whole of its ArrayBuffer's view.
  const data = Buffer.alloc(valueOffsets[codes.length]!);
  let at = 0;
  for (let i = 0; i < codes.length; i++) at = put(values, codes[i]!, data, at);
  return makeData({ type: new Utf8(), length: codes.length, nullCount: 0, valueOffsets, data });
}

/** The Float64 column of `values`, null where one is NaN (a side without the row): its slot holds 0, as apache-arrow's builder leaves it. */
function float(values: Float64Array): Data {
  const data = new Float64Array(values.length);
  const nullBitmap = new Uint8Array((values.length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i]!)) nullCount++;
    else {
      data[i] = values[i]!;
      nullBitmap[i >> 3]! |= 1 << (i & 7);
    }
  }
  return makeData({ type: new Float64(), length: values.length, nullCount, ...(nullCount > 0 && { nullBitmap }), data });
}
