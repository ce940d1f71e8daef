import {
  type Data,
  type DataType,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  type Vector,
  vectorFromArray,
} from 'apache-arrow';
import { SLICE, Turns } from '../store/slices.ts';
import { END_OF_STREAM } from './arrow-renderer.ts';
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

/** The header line of a result's CSV: its columns' names. */
export const csvHeaderLine = (columns: ReadonlyArray<Pick<TableColumn, 'name'>>) => `${columns.map((c) => csvField(c.name)).join(',')}\r\n`;

/** Rows [start, end) as CSV lines, each ended by CRLF. */
function csvLines(columns: readonly TableColumn[], start: number, end: number): string {
  let out = '';
  for (let r = start; r < end; r++) out += `${columns.map((c) => c.text?.(r) ?? csvValue(c.value(r), c.type)).join(',')}\r\n`;
  return out;
}

const csv = ({ columns, start, end }: TablePage): string => csvHeaderLine(columns) + csvLines(columns, start, end);

const ARROW_TYPES = { text: () => new Utf8(), integer: () => new Int32(), double: () => new Float64() };

/**
 * A result's Arrow stream, written by apache-arrow a part at a time: `start` (the
 * schema message), then `batch` for each slice of rows, then END_OF_STREAM. One
 * writer writes them all, collecting what it writes (as render/arrow-renderer.ts's
 * does): a stream written whole per batch encoded the schema again each time. Its
 * fields are all nullable: the schema is written before the rows that would say
 * whether a column holds a null.
 */
export class ArrowStreamParts extends RecordBatchStreamWriter {
  private chunks: Uint8Array[] = [];
  readonly start: Buffer;
  private readonly fields: Schema;

  constructor(columns: ReadonlyArray<Pick<TableColumn, 'name' | 'type'>>) {
    super();
    this.fields = new Schema(columns.map((c) => new Field(c.name, ARROW_TYPES[c.type]() as DataType, true)));
    this.reset(undefined, this.fields);
    this.start = this.take();
  }

  protected override _write(chunk: ArrayBufferView): this {
    if (chunk.byteLength > 0) this.chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    return this;
  }

  /** The record batch message of `length` rows whose columns are `children`, in the schema's order. */
  batch(children: Data[], length: number): Buffer {
    const { fields } = this;
    this._writeRecordBatch(new RecordBatch(fields, makeData({ type: new Struct(fields.fields), length, nullCount: 0, children })));
    return this.take();
  }

  private take(): Buffer {
    const out = Buffer.concat(this.chunks);
    this.chunks = [];
    return out;
  }
}

const columnVector = (column: TableColumn, start: number, end: number): Vector =>
  vectorFromArray(
    Array.from({ length: end - start }, (_, i) => column.value(start + i)),
    ARROW_TYPES[column.type]() as DataType,
  );

function arrowTable({ columns, start, end }: TablePage): Table {
  const vectors: Record<string, Vector> = {};
  for (const column of columns) vectors[column.name] = columnVector(column, start, end);
  return new Table(vectors);
}

/**
 * A whole result as one CSV file (the header row once) or one Arrow IPC stream (the
 * schema once, then a record batch per slice), from `pages` read one after another:
 * rows a diff reads from DuckDB a batch at a time, or an aggregate's groups at once.
 * `pages` yields at least one page (an empty one for an empty result), since the
 * header and the schema come from its columns. Rendered SLICE rows at a time, taking
 * turns with the event loop between slices, as an export's rows are (render/rows.ts):
 * a whole result of text in one step would hold the loop while other requests wait.
 */
export async function* streamTable(format: 'csv' | 'arrow', pages: AsyncIterable<TablePage> | Iterable<TablePage>): AsyncGenerator<Buffer> {
  const turns = new Turns();
  let arrow: ArrowStreamParts | undefined;
  let started = false;
  for await (const { columns, start, end } of pages) {
    if (!started) {
      started = true;
      if (format === 'csv') yield Buffer.from(csvHeaderLine(columns));
      else {
        arrow = new ArrowStreamParts(columns);
        yield arrow.start;
      }
    }
    for (let at = start; at < end; at += SLICE) {
      await turns.turn();
      const to = Math.min(end, at + SLICE);
      if (arrow)
        yield arrow.batch(
          columns.map((c) => columnVector(c, at, to).data[0]!),
          to - at,
        );
      else yield Buffer.from(csvLines(columns, at, to));
    }
  }
  if (arrow) yield END_OF_STREAM;
}

/** The chunks a generator yields, as one buffer. */
export async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}
