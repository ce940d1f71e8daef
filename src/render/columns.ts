import { type Data, Float64, Int32, makeData, Utf8 } from 'apache-arrow';
import { SLICE, Turns } from '../store/slices.ts';
import { END_OF_STREAM } from './arrow-renderer.ts';
import { csvField } from './csv-syntax.ts';
import { MAX_DOUBLE_LENGTH, writeDouble } from './json-number.ts';
import { ArrowStreamParts, csvHeaderLine, type TableColumn } from './table.ts';

// A kept result's rows (a revisions diff, a history) as numbers in typed arrays, and
// its whole CSV file or Arrow stream written from them: every batch of one result is
// coded against the same values, so each value's text is encoded once, the first
// time, and a row is copies of those bytes and its numbers, as an export's rows are
// (render/text-renderer.ts).

/** A column of codes into `values`, which every batch of one result shares (a dimension's dictionary, a change's names, releases' ids). */
export interface CodedColumn {
  readonly name: string;
  readonly type: 'text' | 'integer';
  /** A null is an empty CSV field and an Arrow null. */
  readonly values: readonly (string | number | null)[];
  readonly codes: Uint8Array | Uint16Array | Uint32Array;
}

/** A column of doubles, NaN where there is no value (metrics are never NaN in a release). */
export interface DoubleColumn {
  readonly name: string;
  readonly type: 'double';
  readonly doubles: Float64Array;
}

export type RowsColumn = CodedColumn | DoubleColumn;

/** Rows of a kept result, column by column. */
export interface ColumnRows {
  readonly count: number;
  readonly columns: readonly RowsColumn[];
}

/** The value of `column` in row `r`, null where there is none. */
export function columnValue(column: RowsColumn, r: number): string | number | null {
  if (column.type !== 'double') return column.values[column.codes[r]!]!;
  return Number.isNaN(column.doubles[r]!) ? null : column.doubles[r]!;
}

/**
 * A whole result as one CSV file or one Arrow stream, the same bytes as streamTable
 * writes for its rows (test/whole-csv.test.ts): the header or schema from `columns`,
 * then each batch's rows, SLICE rows at a time, taking turns with the event loop
 * between slices.
 */
export async function* streamColumns(
  format: 'csv' | 'arrow',
  columns: ReadonlyArray<Pick<TableColumn, 'name' | 'type'>>,
  batches: AsyncIterable<ColumnRows>,
): AsyncGenerator<Buffer> {
  const arrow = format === 'arrow' ? new ArrowStreamParts(columns) : undefined;
  yield arrow ? arrow.start : Buffer.from(csvHeaderLine(columns));
  const turns = new Turns();
  let encoded: Encoded | undefined;
  for await (const rows of batches) {
    encoded ??= encode(rows, format);
    for (let at = 0; at < rows.count; at += SLICE) {
      const to = Math.min(rows.count, at + SLICE);
      if (arrow) {
        // A column at a time: a whole batch of 4,096 rows was a step of tens of ms on a busy machine.
        const data: Data[] = [];
        for (const column of arrowColumns(encoded, rows, at, to)) {
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

/** Each coded column's values' bytes (CSV's field, or Arrow's UTF-8), undefined for a column of doubles. */
interface Encoded {
  readonly texts: readonly (Texts | undefined)[];
  /** CSV only: the most bytes a row takes. */
  readonly maxRowBytes: number;
}

function encode(rows: ColumnRows, format: 'csv' | 'arrow'): Encoded {
  const text = (value: string | number | null) => (value === null ? '' : format === 'csv' ? csvField(value) : String(value));
  const encoded = rows.columns.map((column) => (column.type === 'double' ? undefined : texts(column.values.map(text))));
  const fields = encoded.reduce((n, t) => n + (t ? t.longest : MAX_DOUBLE_LENGTH), 0);
  return { texts: encoded, maxRowBytes: fields + rows.columns.length + 2 };
}

const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/**
 * Rows [from, to) as CSV lines, each ended by CRLF; a null is an empty field. Rows
 * are sorted by their first columns (the dimensions), so a row mostly repeats the one
 * before it up to its last dimensions: that prefix is copied from the row before in one go.
 */
function csvRows(encoded: Encoded, rows: ColumnRows, from: number, to: number): Buffer {
  const out = Buffer.allocUnsafe((to - from) * encoded.maxRowBytes);
  const { columns } = rows;
  const lead = columns.findIndex((column) => column.type === 'double');
  const leading = columns.slice(0, lead < 0 ? columns.length : lead).map((column) => (column as CodedColumn).codes);
  // Where the row before ends each leading column's field, from its start.
  const ends = new Int32Array(leading.length);
  let previous = 0;
  let at = 0;
  for (let r = from; r < to; r++) {
    const start = at;
    let same = 0;
    if (r > from) while (same < leading.length && leading[same]![r] === leading[same]![r - 1]) same++;
    if (same > 0) {
      out.copyWithin(at, previous, previous + ends[same - 1]!);
      at += ends[same - 1]!;
    }
    for (let c = same; c < columns.length; c++) {
      if (c > 0) out[at++] = COMMA;
      const column = columns[c]!;
      if (column.type !== 'double') at = put(encoded.texts[c]!, column.codes[r]!, out, at);
      else if (!Number.isNaN(column.doubles[r]!)) at = writeDouble(out, at, column.doubles[r]!);
      if (c < leading.length) ends[c] = at - start;
    }
    previous = start;
    out[at++] = CR;
    out[at++] = LF;
  }
  return out.subarray(0, at);
}

/** Rows [from, to) as Arrow columns, each made when called: text as Utf8, integers as Int32, doubles as Float64, with nulls. */
function arrowColumns(encoded: Encoded, rows: ColumnRows, from: number, to: number): Array<() => Data> {
  return rows.columns.map((column, c) => (): Data => {
    if (column.type === 'double') return float(column.doubles.subarray(from, to));
    const codes = column.codes.subarray(from, to);
    const nulls = validity(codes.length, (i) => column.values[codes[i]!] === null);
    if (column.type === 'text') return utf8(encoded.texts[c]!, codes, nulls);
    const data = new Int32Array(codes.length);
    for (let i = 0; i < codes.length; i++) data[i] = (column.values[codes[i]!] as number | null) ?? 0;
    return makeData({ type: new Int32(), length: codes.length, ...nulls, data });
  });
}

/** The null count and, where there is a null, the validity bitmap of `length` values. */
function validity(length: number, isNull: (i: number) => boolean): { nullCount: number; nullBitmap?: Uint8Array } {
  const nullBitmap = new Uint8Array((length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < length; i++) {
    if (isNull(i)) nullCount++;
    else nullBitmap[i >> 3]! |= 1 << (i & 7);
  }
  return nullCount > 0 ? { nullCount, nullBitmap } : { nullCount };
}

/** The Utf8 column of value `code` of `values` for each of `codes` (a null's text is empty). */
function utf8(values: Texts, codes: Uint8Array | Uint16Array | Uint32Array, nulls: ReturnType<typeof validity>): Data {
  const valueOffsets = new Int32Array(codes.length + 1);
  const { offsets } = values;
  for (let i = 0; i < codes.length; i++) valueOffsets[i + 1] = valueOffsets[i]! + offsets[codes[i]! + 1]! - offsets[codes[i]!]!;
  // Not from Buffer's pool: apache-arrow reads the whole of its ArrayBuffer's view.
  const data = Buffer.alloc(valueOffsets[codes.length]!);
  let at = 0;
  for (let i = 0; i < codes.length; i++) at = put(values, codes[i]!, data, at);
  return makeData({ type: new Utf8(), length: codes.length, ...nulls, valueOffsets, data });
}

/** The Float64 column of `values`, null where one is NaN: its slot holds 0, as apache-arrow's builder leaves it. */
function float(values: Float64Array): Data {
  const data = new Float64Array(values.length);
  const nulls = validity(values.length, (i) => Number.isNaN(values[i]!));
  for (let i = 0; i < values.length; i++) if (!Number.isNaN(values[i]!)) data[i] = values[i]!;
  return makeData({ type: new Float64(), length: values.length, ...nulls, data });
}
